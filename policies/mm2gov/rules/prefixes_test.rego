package mm2gov.rules.prefixes_test

import data.mm2gov.lib.input_test as fx
import data.mm2gov.rules.prefixes

test_prefixes_with_separator_pass if {
	vs := prefixes.violations with input as fx.base
	fx.hits(vs, "prefix_missing_separator") == set()
}

test_topic_prefix_without_separator_fires if {
	vs := prefixes.violations with input as fx.repo([object.union(fx.payments, {"topic_prefixes": ["payments.", "pay"]})])
	fx.hits(vs, "prefix_missing_separator") == {["payments", "tenants/payments.yaml:6"]}
	some v in vs
	v.severity == "high"
	contains(v.message, "topic prefix 'pay' does not end with a separator (- . _)")
}

test_group_prefix_without_separator_fires if {
	vs := prefixes.violations with input as fx.repo([object.union(fx.payments, {"group_prefixes": ["payments"]})])
	fx.hits(vs, "prefix_missing_separator") == {["payments", "tenants/payments.yaml:8"]}
	some v in vs
	contains(v.message, "e.g. 'payments-'")
}

test_distinct_prefixes_pass if {
	vs := prefixes.violations with input as fx.base
	fx.hits(vs, "prefix_overlap") == set()
}

test_similar_names_with_separators_pass if {
	repo := fx.repo([fx.tenant("t1", {}), fx.tenant("t10", {}), fx.tenant("t1x", {})])
	vs := prefixes.violations with input as repo
	fx.hits(vs, "prefix_overlap") == set()
}

test_own_prefixes_overlapping_each_other_pass if {
	vs := prefixes.violations with input as fx.repo([object.union(fx.payments, {"topic_prefixes": ["payments.", "payments.orders."]})])
	fx.hits(vs, "prefix_overlap") == set()
}

test_topic_prefix_inside_another_tenants_fires_for_both if {
	risk := fx.tenant("risk", {"topic_prefixes": ["risk.", "payments.risk."]})
	vs := prefixes.violations with input as fx.repo([fx.payments, risk])
	fx.hits(vs, "prefix_overlap") == {["payments", "tenants/payments.yaml:5"], ["risk", "tenants/risk.yaml:6"]}
	some v in vs
	v.tenant == "risk"
	v.message == "tenant risk: topic prefix 'payments.risk.' overlaps tenant payments's topic prefix 'payments.' (one starts with the other), so their ACLs, flows and audits cover each other's names; rename one of them: prefixes made of the tenant name and '.' or '_' (which tenant names cannot contain), e.g. 'risk.' and 'payments.', never overlap"
}

test_identical_topic_prefix_fires if {
	risk := fx.tenant("risk", {"topic_prefixes": ["payments."]})
	vs := prefixes.violations with input as fx.repo([fx.payments, risk])
	fx.hits(vs, "prefix_overlap") == {["payments", "tenants/payments.yaml:5"], ["risk", "tenants/risk.yaml:5"]}
	some v in vs
	v.tenant == "payments"
	contains(v.message, "topic prefix 'payments.' is also declared by tenant risk")
}

test_prefix_without_separator_overlaps_many if {
	pay := fx.tenant("payroll", {"topic_prefixes": ["payroll."]})
	vs := prefixes.violations with input as fx.repo([fx.payments, fx.marketing, pay, fx.tenant("risk", {"topic_prefixes": ["pay"]})])
	fx.hits(vs, "prefix_overlap") == {["payments", "tenants/payments.yaml:5"], ["payroll", "tenants/payroll/topic_prefixes/0"], ["risk", "tenants/risk.yaml:5"]}
	count([v | some v in vs; v.rule == "prefix_overlap"; v.tenant == "risk"]) == 2
}

test_group_prefix_overlap_fires if {
	risk := fx.tenant("risk", {"group_prefixes": ["payments-risk-"]})
	vs := prefixes.violations with input as fx.repo([fx.payments, risk])
	fx.hits(vs, "prefix_overlap") == {["payments", "tenants/payments.yaml:8"], ["risk", "tenants/risk.yaml:8"]}
	some v in vs
	contains(v.message, "group prefix 'payments-risk-' overlaps tenant payments's group prefix 'payments-'")
}
