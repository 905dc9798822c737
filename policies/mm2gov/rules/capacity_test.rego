package mm2gov.rules.capacity_test

import data.mm2gov.lib.input_test as fx
import data.mm2gov.rules.capacity

platform := {
	"calibration": {
		"measured_at": "2026-11-26T00:00:00Z", "measured_by": "test", "kafka_version": "4.3.1",
		"task_bytes_per_second": 1000,
		"node": {"tasks": 2, "cpu": "1", "memory": "2Gi", "heap": "1g"},
	},
	"limits": {"flow_bytes_per_second": 4000, "flow_nodes": 2},
	"clusters": {
		"onprem": {"brokers": 1, "replication_bytes_per_second": 5000},
		"cloud": {"brokers": 2, "replication_bytes_per_second": 5000},
	},
}

# What input.py gives a flow that asks `rate` bytes/s over `partitions` partitions (model/capacity.py's arithmetic).
sizing(rate, partitions, tasks, nodes) := {
	"bytes_per_second": rate, "catch_up_bytes_per_second": rate, "source_partitions": partitions,
	"tasks": tasks, "nodes": nodes, "cpu": "1", "memory": "2Gi", "heap": "1g",
	"source_fetch_byte_rate": rate, "target_produce_byte_rate": rate,
}

asked(rate, partitions) := {"bytes_per_second": rate, "catch_up_bytes_per_second": null, "source_partitions": partitions}

with_capacity(flow, rate, partitions, tasks, nodes) := object.union(flow, {
	"capacity": asked(rate, partitions),
	"sizing": sizing(rate, partitions, tasks, nodes),
})

# payments' flow (onprem -> cloud) and marketing's (cloud -> onprem) sized as given, with the platform.
repo(payments_sizing, marketing_sizing) := object.union(
	fx.repo([
		object.union(fx.payments, {"flows": [object.union(fx.payments.flows[0], payments_sizing)]}),
		object.union(fx.marketing, {"flows": [object.union(fx.marketing.flows[0], marketing_sizing)]}),
	]),
	{"capacity": platform},
)

sized(rate, partitions, tasks, nodes) := {"capacity": asked(rate, partitions), "sizing": sizing(rate, partitions, tasks, nodes)}

within := repo(sized(2000, 4, 2, 1), sized(1000, null, 1, 1))

test_no_capacity_anywhere_no_violation if {
	capacity.violations == set() with input as fx.base
}

test_flows_within_every_limit_pass if {
	capacity.violations == set() with input as within
}

test_capacity_without_calibration_fires if {
	no_platform := object.remove(within, ["capacity"])
	vs := capacity.violations with input as json.patch(no_platform, [
		{"op": "remove", "path": "/tenants/payments/flows/0/sizing"},
		{"op": "remove", "path": "/tenants/marketing/flows/0/sizing"},
	])
	fx.hits(vs, "capacity_uncalibrated") == {["payments", "tenants/payments.yaml:14"], ["marketing", "tenants/marketing.yaml:14"]}
	every v in vs { v.severity == "high" }
}

test_cluster_missing_from_capacity_yaml_fires_naming_it if {
	only_cloud := json.patch(within, [
		{"op": "remove", "path": "/capacity/clusters/onprem"},
		{"op": "remove", "path": "/tenants/payments/flows/0/sizing"},
		{"op": "remove", "path": "/tenants/marketing/flows/0/sizing"},
	])
	vs := capacity.violations with input as only_cloud
	fx.hits(vs, "capacity_cluster_undeclared") == {["payments", "tenants/payments.yaml:14"], ["marketing", "tenants/marketing.yaml:14"]}
	some v in vs
	v.tenant == "payments"
	contains(v.message, "do not list onprem")
}

test_flow_over_the_rate_limit_fires if {
	vs := capacity.violations with input as repo(sized(4001, 8, 5, 3), sized(1000, null, 1, 1))
	fx.hits(vs, "capacity_flow_over_limit") == {["payments", "tenants/payments.yaml:14"]}
	some v in vs
	v.rule == "capacity_flow_over_limit"
	contains(v.message, "4001 bytes/s (the platform allows a flow 4000)")
	contains(v.message, "3 MM2 nodes (the platform allows a flow 2)")
}

test_flow_at_the_limit_passes if {
	vs := capacity.violations with input as repo(sized(4000, 4, 4, 2), sized(1000, null, 1, 1))
	fx.hits(vs, "capacity_flow_over_limit") == set()
}

test_more_tasks_than_partitions_fires if {
	vs := capacity.violations with input as repo(sized(3000, 2, 3, 2), sized(1000, null, 1, 1))
	fx.hits(vs, "capacity_tasks_over_partitions") == {["payments", "tenants/payments.yaml:14"]}
	some v in vs
	contains(v.message, "needs 3 MM2 tasks for 3000 bytes/s, but its source topics have 2 partitions")
}

test_several_tasks_without_partitions_fires if {
	vs := capacity.violations with input as repo(sized(2000, null, 2, 1), sized(1000, null, 1, 1))
	fx.hits(vs, "capacity_tasks_over_partitions") == {["payments", "tenants/payments.yaml:14"]}
}

test_one_task_needs_no_partition_count if {
	vs := capacity.violations with input as repo(sized(1000, null, 1, 1), sized(1000, null, 1, 1))
	fx.hits(vs, "capacity_tasks_over_partitions") == set()
}

test_cluster_over_budget_names_every_flow_into_it if {
	# two flows into cloud: payments' (onprem -> cloud) and a second one of marketing's (onprem -> cloud)
	second := object.union(fx.flow("marketing-onprem-to-cloud", "onprem", "cloud", "default", [fx.pattern("marketing\\..*", "marketing.")], []), sized(3001, 4, 4, 2))
	over := json.patch(repo(sized(2000, 4, 2, 1), sized(1000, null, 1, 1)), [{"op": "add", "path": "/tenants/marketing/flows/-", "value": second}])
	vs := capacity.violations with input as over
	budget := [v | some v in vs; v.rule == "capacity_cluster_over_budget"]
	count(budget) == 2 # into cloud, and out of onprem: the same two flows
	some v in budget
	v.tenant == ""
	v.message == "cluster cloud: the flows into it, marketing-onprem-to-cloud (3001), payments-onprem-to-cloud (2000), ask 5001 bytes/s together, over its replication budget of 5000; raise the budget in capacity.yaml or lower the flows' capacity"
}

test_cluster_at_its_budget_passes if {
	second := object.union(fx.flow("marketing-onprem-to-cloud", "onprem", "cloud", "default", [fx.pattern("marketing\\..*", "marketing.")], []), sized(3000, 4, 3, 2))
	at := json.patch(repo(sized(2000, 4, 2, 1), sized(1000, null, 1, 1)), [{"op": "add", "path": "/tenants/marketing/flows/-", "value": second}])
	vs := capacity.violations with input as at
	[v | some v in vs; v.rule == "capacity_cluster_over_budget"] == []
}

test_flow_without_capacity_on_a_budgeted_cluster_warns if {
	vs := capacity.violations with input as repo(sized(1000, null, 1, 1), {})
	fx.hits(vs, "capacity_missing") == {["marketing", "tenants/marketing.yaml:14"]}
	some v in vs
	v.severity == "medium"
	contains(v.message, "gives cloud and onprem a replication budget")
}
