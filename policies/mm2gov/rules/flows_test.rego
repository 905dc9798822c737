package mm2gov.rules.flows_test

import data.mm2gov.lib.input_test as fx
import data.mm2gov.rules.flows

# payments with one flow whose topic and group patterns are given.
payments_flow(topics, groups) := fx.repo([
	object.union(fx.payments, {"flows": [fx.flow("payments-onprem-to-cloud", "onprem", "cloud", "default", topics, groups)]}),
	fx.marketing,
])

test_topics_inside_scope_pass if {
	vs := flows.violations with input as fx.base
	fx.hits(vs, "flow_topics_outside_scope") == set()
}

test_topic_regex_outside_prefix_fires if {
	vs := flows.violations with input as payments_flow([fx.pattern("pay.*", "pay")], [])
	fx.hits(vs, "flow_topics_outside_scope") == {["payments", "tenants/payments.yaml:17"]}
	some v in vs
	v.severity == "high"
	v.message == `flow payments-onprem-to-cloud: topic regex 'pay.*' can match names starting with 'pay' outside payments's topic prefixes [payments.]; anchor it at a prefix, e.g. 'payments\..*'`
}

test_one_violation_per_regex_listing_every_outside_alternative if {
	both := {
		"regex": "pay.*|risk\\..*|payments\\.x",
		"case_insensitive": false,
		"alternatives": [
			{"literal_prefix": "pay", "exact": false},
			{"literal_prefix": "risk.", "exact": false},
			{"literal_prefix": "payments.x", "exact": true},
		],
	}
	vs := flows.violations with input as payments_flow([fx.pattern("payments\\..*", "payments."), both], [])
	fx.hits(vs, "flow_topics_outside_scope") == {["payments", "tenants/payments.yaml:18"]}
	some v in vs
	contains(v.message, "starting with 'pay' or 'risk.' outside")
}

test_exact_alternative_inside_pass if {
	exact := {"regex": "payments\\.orders", "case_insensitive": false, "alternatives": [{"literal_prefix": "payments.orders", "exact": true}]}
	vs := flows.violations with input as payments_flow([exact], [])
	fx.hits(vs, "flow_topics_outside_scope") == set()
}

test_exact_alternative_outside_fires if {
	exact := {"regex": "orders", "case_insensitive": false, "alternatives": [{"literal_prefix": "orders", "exact": true}]}
	vs := flows.violations with input as payments_flow([exact], [])
	fx.hits(vs, "flow_topics_outside_scope") == {["payments", "tenants/payments.yaml:17"]}
}

test_match_everything_fires if {
	vs := flows.violations with input as payments_flow([fx.pattern(".*", "")], [])
	fx.hits(vs, "flow_topics_outside_scope") == {["payments", "tenants/payments.yaml:17"]}
	some v in vs
	contains(v.message, "starting with any text outside")
}

test_case_insensitive_topic_regex_fires if {
	ci := object.union(fx.pattern("(?i)payments\\..*", "payments."), {"case_insensitive": true})
	vs := flows.violations with input as payments_flow([ci], [])
	fx.hits(vs, "flow_topics_outside_scope") == {["payments", "tenants/payments.yaml:17"]}
	some v in vs
	contains(v.message, "is case-insensitive")
	contains(v.message, "remove (?i)")
}

test_groups_inside_scope_pass if {
	vs := flows.violations with input as fx.base
	fx.hits(vs, "flow_groups_outside_scope") == set()
}

test_group_regex_outside_prefix_fires if {
	vs := flows.violations with input as payments_flow([fx.pattern("payments\\..*", "payments.")], [fx.pattern(".*", "")])
	fx.hits(vs, "flow_groups_outside_scope") == {["payments", "tenants/payments.yaml:19"]}
	fx.hits(vs, "flow_topics_outside_scope") == set()
	some v in vs
	v.message == "flow payments-onprem-to-cloud: group regex '.*' can match names starting with any text outside payments's group prefixes [payments-]; anchor it at a prefix, e.g. 'payments-.*'"
}

test_case_insensitive_group_regex_fires if {
	ci := object.union(fx.pattern("(?i)payments-.*", "payments-"), {"case_insensitive": true})
	vs := flows.violations with input as payments_flow([fx.pattern("payments\\..*", "payments.")], [ci])
	fx.hits(vs, "flow_groups_outside_scope") == {["payments", "tenants/payments.yaml:19"]}
}

test_group_regex_without_group_prefixes_fires if {
	no_groups := fx.repo([object.union(fx.marketing, {
		"group_prefixes": [],
		"flows": [fx.flow("m", "cloud", "onprem", "default", [fx.pattern("marketing\\..*", "marketing.")], [fx.pattern("marketing-.*", "marketing-")])],
	})])
	vs := flows.violations with input as no_groups
	fx.hits(vs, "flow_groups_outside_scope") == {["marketing", "tenants/marketing.yaml:19"]}
	some v in vs
	contains(v.message, "marketing declares none; add group_prefixes")
}
