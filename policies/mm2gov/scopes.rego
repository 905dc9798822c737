# Each tenant's scope (docs/policies.md, "Decision"): what Python compiles into
# ACLs, MM2 flows and the rest. Lists that are sets are sorted so the decision
# is the same on every run. Built inline, in one comprehension over the
# tenants, with few function calls: each call costs allocations, which add up
# on repos with a thousand tenants.
package mm2gov.scopes

import data.mm2gov.lib.input as lib

scopes := {name: scope |
	some name, tenant in input.tenants
	remotes := lib.flow_remote_prefixes[name]
	scope := {
		"tenant": name,
		"classification": tenant.classification,
		"topic_prefixes": tenant.topic_prefixes,
		"group_prefixes": tenant.group_prefixes,
		"clusters": lib.home_clusters(tenant),
		# input.py's names (names.tenant_namespace) and the marker its records carry, for the resolved tenancy
		# (a missing name is null, which governance/model/tenancy.py refuses: the tenant never just vanishes)
		"namespace": object.get(tenant, ["names", "namespace"], null),
		"record_marker": object.get(tenant, "record_marker", null),
		"principals": [{
			"name": p.name,
			"access": p.access,
			"topic_operations": ops[0],
			"group_operations": ops[1],
			"quota": object.get(p, "quota", null),
		} |
			some p in tenant.principals
			ops := operations(p.access)
		],
		"flows": [{
			"id": lib.flow_id(f),
			"source": f.source,
			"target": f.target,
			"replication_policy": f.replication_policy,
			"delivery": f.delivery,
			"topics": f.topics,
			"groups": f.groups,
			# only narrow the flow: compile/mm2.py puts mm2gov's own exclusions in front of them
			"exclude_topics": object.get(f, "exclude_topics", []),
			"exclude_groups": object.get(f, "exclude_groups", []),
			"remote_topic_prefixes": remotes[i],
			# opt-in replication SLO and, with it, the probe topic the flow also replicates (input.py facts)
			"slo": object.get(f, "slo", null),
			"probe": object.get(f, "probe", null),
			# what its MM2 and quotas are sized to (input.py, model/capacity.py), or null: one task, one node
			"capacity": object.get(f, "sizing", null),
		} |
			some i, f in tenant.flows
		],
		"grants_given": grants_given[name],
		"grants_received": object.get(grants_received, name, []),
	}
}

# [topic_operations, group_operations] of a principal's access list: `read`
# gives READ + DESCRIBE on topics and READ on groups, `write` gives WRITE +
# DESCRIBE on topics. The usual access lists come from a table.
operations(access) := ops if {
	ops := known_operations[access]
} else := operations_of(access)

known_operations := {access: operations_of(access) |
	some access in [["read"], ["write"], ["read", "write"], ["write", "read"]]
}

operations_of(access) := [
	sort({op | some a in access; some op in topic_operations[a]}),
	sort({"READ" | "read" in access}),
]

topic_operations := {"read": {"READ", "DESCRIBE"}, "write": {"WRITE", "DESCRIBE"}}

# grants_given[tenant] = its valid grants (lib.grant_valid), in its order.
grants_given := {name: given |
	some name, tenant in input.tenants
	given := [{"to": g.to, "topics": g.topics, "access": g.access} |
		some g in tenant.grants
		lib.grant_valid(tenant, g)
	]
}

# grants_received[tenant] = the valid grants other tenants give it, as
# {"from", "topics", "access"}, sorted. Built from [tenant, grants] pairs whose
# grants are a comprehension in a rule body closing over the tenant, which OPA
# indexes (one pass over the grants); an object comprehension with the same
# comprehension inside took a pass over every grant per tenant.
grants_received := {to: sort(grants) | some [to, grants] in received_groups}

received_groups contains [to, grants] if {
	some [to, _] in received_entries
	grants := {grant | some [t, grant] in received_entries; t == to}
}

received_entries := [[g.to, {"from": name, "topics": g.topics, "access": g.access}] |
	some name, given in grants_given
	some g in given
]
