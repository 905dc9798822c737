package mm2gov.rules.replication_test

import data.mm2gov.lib.input_test as fx
import data.mm2gov.rules.replication

topics := [fx.pattern("marketing\\..*", "marketing.")]

marketing_flows(flows) := fx.repo([fx.payments, object.union(fx.marketing, {"flows": flows})])

test_one_way_identity_flow_pass if {
	vs := replication.violations with input as fx.base
	fx.hits(vs, "identity_replication_cycle") == set()
}

test_default_policy_both_ways_pass if {
	vs := replication.violations with input as marketing_flows([
		fx.flow("a", "cloud", "onprem", "default", topics, []),
		fx.flow("b", "onprem", "cloud", "default", topics, []),
	])
	fx.hits(vs, "identity_replication_cycle") == set()
}

test_identity_chain_without_cycle_pass if {
	vs := replication.violations with input as marketing_flows([
		fx.flow("a", "cloud", "onprem", "identity", topics, []),
		fx.flow("b", "onprem", "dr", "identity", topics, []),
	])
	fx.hits(vs, "identity_replication_cycle") == set()
}

test_identity_both_ways_fires if {
	vs := replication.violations with input as marketing_flows([
		fx.flow("marketing-cloud-to-onprem", "cloud", "onprem", "identity", topics, []),
		fx.flow("marketing-onprem-to-cloud", "onprem", "cloud", "identity", topics, []),
	])
	fx.hits(vs, "identity_replication_cycle") == {["marketing", "tenants/marketing.yaml:20"]}
	some v in vs
	v.severity == "high"
	v.message == "tenant marketing: identity flows marketing-cloud-to-onprem (cloud -> onprem), marketing-onprem-to-cloud (onprem -> cloud) form a replication cycle, and with the identity policy MM2 cannot tell replicated topics from local ones, so records go around forever; use replication_policy default on at least one of them or remove one"
}

test_longer_identity_cycle_fires_at_first_flow_on_it if {
	vs := replication.violations with input as marketing_flows([
		fx.flow("side", "dr", "cloud", "default", topics, []),
		fx.flow("a", "cloud", "onprem", "identity", topics, []),
		fx.flow("b", "onprem", "dr", "identity", topics, []),
		fx.flow("c", "dr", "cloud", "identity", topics, []),
	])
	fx.hits(vs, "identity_replication_cycle") == {["marketing", "tenants/marketing.yaml:27"]}
	some v in vs
	contains(v.message, "identity flows a (cloud -> onprem), b (onprem -> dr), c (dr -> cloud)")
}

test_remote_prefixes_apart_pass if {
	vs := replication.violations with input as fx.base
	fx.hits(vs, "remote_topic_in_foreign_prefix") == set()
}

test_identity_remote_equal_to_own_prefix_pass if {
	repo := fx.repo([fx.payments, fx.marketing, fx.tenant("risk", {})])
	vs := replication.violations with input as repo
	vs == set()
}

test_remote_prefix_inside_foreign_prefix_fires if {
	# payments' flow from onprem writes onprem.payments.* on cloud, inside tenant onprem's onprem.
	vs := replication.violations with input as fx.repo([fx.payments, fx.tenant("onprem", {})])
	fx.hits(vs, "remote_topic_in_foreign_prefix") == {["payments", "tenants/payments.yaml:14"]}
	some v in vs
	v.message == "tenant payments: flow payments-onprem-to-cloud (default policy) writes topics named 'onprem.payments.*' on cloud, which overlaps tenant onprem's topic prefix 'onprem.', so replicated topics land in, or cover, the other tenant's names; rename the prefixes or the cluster alias so they do not overlap"
}

test_foreign_prefix_inside_remote_prefix_fires if {
	# risk owns onprem.payments.risk., which payments' replicated topics cover.
	risk := fx.tenant("risk", {"topic_prefixes": ["risk.", "onprem.payments.risk."]})
	vs := replication.violations with input as fx.repo([fx.payments, risk])
	fx.hits(vs, "remote_topic_in_foreign_prefix") == {["payments", "tenants/payments.yaml:14"]}
	some v in vs
	contains(v.message, "overlaps tenant risk's topic prefix 'onprem.payments.risk.'")
}

test_identity_remote_equal_to_foreign_prefix_fires if {
	risk := fx.tenant("risk", {"topic_prefixes": ["marketing."]})
	vs := replication.violations with input as fx.repo([fx.marketing, risk])
	fx.hits(vs, "remote_topic_in_foreign_prefix") == {["marketing", "tenants/marketing.yaml:14"]}
}
