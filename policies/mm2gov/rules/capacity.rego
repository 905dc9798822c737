# Capacity (docs/capacity.md): what each flow asks against what the platform
# calibrated and allows (capacity.yaml, input.capacity). mm2gov sizes every
# flow that declares `capacity` in Python (governance/model/capacity.py) and
# hands the result in as the flow's `sizing`; these rules judge it, never
# re-derive it. A flow that asks for capacity and cannot be sized is a
# violation, so it never runs unthrottled by accident.
package mm2gov.rules.capacity

import data.mm2gov.lib.input as lib

# [tenant, flow index, flow] of every flow that declares capacity.
asking := [[name, i, flow] |
	some name, tenant in input.tenants
	some i, flow in tenant.flows
	object.get(flow, "capacity", null) != null
]

# [tenant, flow index, flow] of every flow mm2gov sized (its `sizing`).
sized := [[name, i, flow] |
	some [name, i, flow] in asking
	object.get(flow, "sizing", null) != null
]

platform := object.get(input, "capacity", null)

violations contains lib.violation("capacity_uncalibrated", "high", name, msg, loc) if {
	platform == null
	some [name, i, flow] in asking
	msg := sprintf(
		"flow %s declares capacity, but the repo has no capacity.yaml: mm2gov sizes a flow's MirrorMaker 2 and its quotas from the platform's calibration (what one MM2 task carries and one node runs); add capacity.yaml (`python bench/capacity.py --calibrate` measures it) or remove the flow's capacity",
		[lib.flow_id(flow)],
	)
	loc := lib.location(sprintf("tenants/%s/flows/%d/capacity", [name, i]))
}

violations contains lib.violation("capacity_cluster_undeclared", "high", name, msg, loc) if {
	platform != null
	some [name, i, flow] in asking
	missing := [alias | some alias in [flow.source, flow.target]; not platform.clusters[alias]]
	count(missing) > 0
	msg := sprintf(
		"flow %s declares capacity, but capacity.yaml's clusters do not list %s: mm2gov needs each cluster's broker count (Kafka enforces a quota per broker) and replication budget to size the flow; add %s to capacity.yaml",
		[lib.flow_id(flow), concat(" and ", missing), concat(" and ", missing)],
	)
	loc := lib.location(sprintf("tenants/%s/flows/%d/capacity", [name, i]))
}

violations contains lib.violation("capacity_flow_over_limit", "high", name, msg, loc) if {
	some [name, i, flow] in sized
	over := [text |
		some [asked, limit, text] in [
			[flow.sizing.catch_up_bytes_per_second, platform.limits.flow_bytes_per_second, sprintf("%d bytes/s (the platform allows a flow %d)", [flow.sizing.catch_up_bytes_per_second, platform.limits.flow_bytes_per_second])],
			[flow.sizing.nodes, platform.limits.flow_nodes, sprintf("%d MM2 nodes (the platform allows a flow %d)", [flow.sizing.nodes, platform.limits.flow_nodes])],
		]
		asked > limit
	]
	count(over) > 0
	msg := sprintf(
		"flow %s asks more than the platform allows one flow: %s; lower its capacity or split its topics over flows",
		[lib.flow_id(flow), concat(" and ", over)],
	)
	loc := lib.location(sprintf("tenants/%s/flows/%d/capacity", [name, i]))
}

violations contains lib.violation("capacity_tasks_over_partitions", "high", name, msg, loc) if {
	some [name, i, flow] in sized
	flow.sizing.tasks > 1
	partitions := flow.sizing.source_partitions
	not partitions >= flow.sizing.tasks
	msg := sprintf(
		"flow %s needs %d MM2 tasks for %d bytes/s, but %s: a task copies whole partitions, so tasks beyond the partitions copy nothing; add partitions to its source topics, or lower its capacity",
		[lib.flow_id(flow), flow.sizing.tasks, flow.sizing.catch_up_bytes_per_second, partitions_text(partitions)],
	)
	loc := lib.location(sprintf("tenants/%s/flows/%d/capacity", [name, i]))
}

partitions_text(null) := "its capacity does not say how many partitions its source topics have (source_partitions)"

partitions_text(n) := sprintf("its source topics have %d partitions", [n]) if n != null

# A cluster's replication budget holds the flows into it together, and the
# flows out of it together: their catch-up rates, which their quotas enforce.
violations contains lib.violation("capacity_cluster_over_budget", "high", "", msg, loc) if {
	some alias, cluster in platform.clusters
	some [end, direction] in [["target", "into"], ["source", "out of"]]
	flows := [sprintf("%s (%d)", [lib.flow_id(flow), flow.sizing.catch_up_bytes_per_second]) |
		some [_, _, flow] in sized
		flow[end] == alias
	]
	total := sum([flow.sizing.catch_up_bytes_per_second | some [_, _, flow] in sized; flow[end] == alias])
	total > cluster.replication_bytes_per_second
	msg := sprintf(
		"cluster %s: the flows %s it, %s, ask %d bytes/s together, over its replication budget of %d; raise the budget in capacity.yaml or lower the flows' capacity",
		[alias, direction, concat(", ", sort(flows)), total, cluster.replication_bytes_per_second],
	)
	loc := lib.location(sprintf("capacity/clusters/%s/replication_bytes_per_second", [alias]))
}

# A flow without capacity on a cluster with a budget runs unthrottled: the
# budget cannot hold while it catches up. Medium: it warns, and a platform
# moving flow by flow to capacity keeps shipping.
violations contains lib.violation("capacity_missing", "medium", name, msg, loc) if {
	platform != null
	some name, tenant in input.tenants
	some i, flow in tenant.flows
	object.get(flow, "capacity", null) == null
	budgeted := [alias | some alias in [flow.source, flow.target]; platform.clusters[alias]]
	count(budgeted) > 0
	msg := sprintf(
		"flow %s declares no capacity, but capacity.yaml gives %s a replication budget: its MirrorMaker 2 has no quota, so its catch-up can take the share of every other flow there; declare its capacity",
		[lib.flow_id(flow), concat(" and ", budgeted)],
	)
	loc := lib.location(sprintf("tenants/%s/flows/%d", [name, i]))
}
