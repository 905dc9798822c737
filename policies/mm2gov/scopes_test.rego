package mm2gov.scopes_test

import data.mm2gov.lib.input_test as fx
import data.mm2gov.scopes

test_scope_of_a_tenant if {
	s := scopes.scopes.payments with input as fx.base
	s == {
		"tenant": "payments",
		"classification": "confidential",
		"topic_prefixes": ["payments."],
		"group_prefixes": ["payments-"],
		"clusters": ["onprem"],
		"namespace": "payments",
		"record_marker": null,
		"principals": [{
			"name": "User:payments-app",
			"access": ["read", "write"],
			"topic_operations": ["DESCRIBE", "READ", "WRITE"],
			"group_operations": ["READ"],
			"quota": null,
		}],
		"flows": [{
			"id": "payments-onprem-to-cloud",
			"source": "onprem",
			"target": "cloud",
			"replication_policy": "default",
			"delivery": "at_least_once",
			"topics": ["payments\\.orders.*"],
			"groups": ["payments-.*"],
			"exclude_topics": [],
			"exclude_groups": [],
			"remote_topic_prefixes": ["onprem.payments."],
			"slo": null,
			"probe": null,
			"capacity": null,
		}],
		"grants_given": [{"to": "marketing", "topics": ["payments.public."], "access": ["read"]}],
		"grants_received": [],
	}
}

test_flow_excludes_reach_the_scope if {
	f := object.union(fx.payments.flows[0], {"exclude_topics": ["payments\\.orders\\.tmp.*"], "exclude_groups": ["payments-test.*"]})
	s := scopes.scopes.payments with input as fx.repo([object.union(fx.payments, {"flows": [f]}), fx.marketing])
	s.flows[0].exclude_topics == ["payments\\.orders\\.tmp.*"]
	s.flows[0].exclude_groups == ["payments-test.*"]
}

test_probe_facts_reach_the_scope if {
	probe := {"topic": "payments.mm2gov-probe", "topic_item": "payments\\.mm2gov\\-probe", "remote_topic": "onprem.payments.mm2gov-probe"}
	f := object.union(fx.payments.flows[0], {"slo": {"latency_p99_ms": 500}, "probe": probe})
	s := scopes.scopes.payments with input as fx.repo([object.union(fx.payments, {"flows": [f]}), fx.marketing])
	s.flows[0].slo == {"latency_p99_ms": 500}
	s.flows[0].probe == probe
}

test_flow_sizing_reaches_the_scope_as_its_capacity if {
	sizing := {"tasks": 2, "nodes": 1, "catch_up_bytes_per_second": 2000}
	f := object.union(fx.payments.flows[0], {"capacity": {"bytes_per_second": 2000}, "sizing": sizing})
	s := scopes.scopes.payments with input as fx.repo([object.union(fx.payments, {"flows": [f]}), fx.marketing])
	s.flows[0].capacity == sizing
}

test_every_tenant_has_a_scope if {
	s := scopes.scopes with input as fx.base
	object.keys(s) == {"payments", "marketing"}
}

test_identity_flow_keeps_prefixes if {
	s := scopes.scopes.marketing with input as fx.base
	s.flows[0].remote_topic_prefixes == ["marketing."]
	s.flows[0].groups == []
}

test_clusters_are_flow_sources_sorted_and_unique if {
	topics := [fx.pattern("marketing\\..*", "marketing.")]
	m := object.union(fx.marketing, {"flows": [
		fx.flow("a", "onprem", "cloud", "default", topics, []),
		fx.flow("b", "dr", "cloud", "default", topics, []),
		fx.flow("c", "onprem", "dr", "default", topics, []),
	]})
	s := scopes.scopes.marketing with input as fx.repo([m])
	s.clusters == ["dr", "onprem"]
}

test_clusters_without_flows_are_all_clusters if {
	s := scopes.scopes.risk with input as fx.repo([fx.tenant("risk", {})])
	s.clusters == ["cloud", "dr", "onprem"]
}

test_principal_operations if {
	p := [
		{"name": "User:r", "access": ["read"]},
		{"name": "User:w", "access": ["write"]},
		{"name": "User:wr", "access": ["write", "read"]},
		{"name": "User:rr", "access": ["read", "read"]},
	]
	s := scopes.scopes.risk with input as fx.repo([fx.tenant("risk", {"principals": p})])
	[[x.topic_operations, x.group_operations] | some x in s.principals] == [
		[["DESCRIBE", "READ"], ["READ"]],
		[["DESCRIBE", "WRITE"], []],
		[["DESCRIBE", "READ", "WRITE"], ["READ"]],
		[["DESCRIBE", "READ"], ["READ"]],
	]
	s.principals[2].access == ["write", "read"]
}

test_grants_received if {
	s := scopes.scopes.marketing with input as fx.base
	s.grants_given == []
	s.grants_received == [{"from": "payments", "topics": ["payments.public."], "access": ["read"]}]
}

test_grants_received_sorted_by_giver if {
	repo := fx.repo([
		fx.marketing,
		fx.tenant("risk", {"grants": [{"to": "marketing", "topics": ["risk.public."], "access": ["read"]}]}),
		fx.tenant("ads", {"grants": [{"to": "marketing", "topics": ["ads.x."], "access": ["read"]}]}),
	])
	s := scopes.scopes.marketing with input as repo
	[g.from | some g in s.grants_received] == ["ads", "risk"]
}

test_invalid_grants_are_left_out if {
	bad := object.union(fx.payments, {"grants": [
		{"to": "nobody", "topics": ["payments.public."], "access": ["read"]},
		{"to": "marketing", "topics": ["payments.public."], "access": ["write"]},
		{"to": "marketing", "topics": ["marketing."], "access": ["read"]},
		{"to": "marketing", "topics": ["*"], "access": ["read"]},
		{"to": "marketing", "topics": ["payments.ok."], "access": ["read"]},
	]})
	s := scopes.scopes with input as fx.repo([bad, fx.marketing])
	s.payments.grants_given == [{"to": "marketing", "topics": ["payments.ok."], "access": ["read"]}]
	s.marketing.grants_received == [{"from": "payments", "topics": ["payments.ok."], "access": ["read"]}]
}

test_declared_clusters_win_over_flow_sources if {
	m := object.union(fx.marketing, {"clusters": ["onprem", "dr"]})
	s := scopes.scopes.marketing with input as fx.repo([m])
	s.clusters == ["dr", "onprem"]
}

test_restricted_tenant_without_home_stays_off_the_cloud if {
	hr := fx.tenant("hr", {"classification": "restricted"})
	internal := fx.tenant("ops", {})
	s := scopes.scopes with input as fx.repo([hr, internal])
	s.hr.clusters == ["dr", "onprem"]
	s.ops.clusters == ["cloud", "dr", "onprem"]
}

test_flow_delivery_is_in_the_scope if {
	s := scopes.scopes.payments with input as fx.exactly_once_base
	s.flows[0].delivery == "exactly_once"
}
