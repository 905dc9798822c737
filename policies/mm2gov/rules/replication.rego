# Where replicated topics land on the target cluster.
package mm2gov.rules.replication

import data.mm2gov.lib.input as lib

# IdentityReplicationPolicy keeps topic names, so MM2 cannot tell a replicated
# topic from a local one: identity flows that come back to their source
# replicate the same records around forever.
violations contains lib.violation("identity_replication_cycle", "high", name, msg, loc) if {
	some name, tenant in input.tenants

	# Cheap necessary condition first: an identity flow ends where an
	# identity flow starts.
	some into in tenant.flows
	into.replication_policy == "identity"
	some out in tenant.flows
	out.replication_policy == "identity"
	out.source == into.target

	identity := [[i, flow] |
		some i, flow in tenant.flows
		flow.replication_policy == "identity"
	]
	edges := {flow.source: {t | some [_, f] in identity; f.source == flow.source; t := f.target} |
		some [_, flow] in identity
	}
	cyclic := [[i, flow] |
		some [i, flow] in identity
		flow.source in graph.reachable(edges, {flow.target})
	]
	count(cyclic) > 0
	msg := sprintf(
		"tenant %s: identity flows %s form a replication cycle, and with the identity policy MM2 cannot tell replicated topics from local ones, so records go around forever; use replication_policy default on at least one of them or remove one",
		[name, concat(", ", [sprintf("%s (%s -> %s)", [lib.flow_id(flow), flow.source, flow.target]) | some [_, flow] in cyclic])],
	)
	loc := lib.location(sprintf("tenants/%s/flows/%d/replication_policy", [name, cyclic[0][0]]))
}

violations contains lib.violation("remote_topic_in_foreign_prefix", "high", name, msg, loc) if {
	some [name, i, remote, other, prefix] in remote_overlaps
	flow := input.tenants[name].flows[i]
	msg := sprintf(
		"tenant %s: flow %s (%s policy) writes topics named '%s*' on %s, which overlaps tenant %s's topic prefix '%s', so replicated topics land in, or cover, the other tenant's names; rename the prefixes or the cluster alias so they do not overlap",
		[name, lib.flow_id(flow), flow.replication_policy, remote, flow.target, other, prefix],
	)
	loc := lib.location(sprintf("tenants/%s/flows/%d", [name, i]))
}

# [remote prefix, tenant, flow index] for every remote-topic prefix of every flow.
remote_entries := [[remote, name, i] |
	some name, remotes in lib.flow_remote_prefixes
	some i, flow_remotes in remotes
	some remote in flow_remotes
]

# Remote prefixes and topic prefixes as [text, tenant] (a set: an identity
# flow's remote prefixes are its tenant's own prefixes and collapse with them).
# Their candidate shorter sides (lib.shorter_sides) are the only texts a pair
# of a remote prefix and another tenant's topic prefix can overlap through.
candidates := lib.shorter_sides(lib.topic_prefix_entries | {[remote, name] | some [remote, name, _] in remote_entries})

candidate_lengths := {count(c) | some c in candidates}

# [tenant, flow index, remote prefix, other tenant, its topic prefix] for each
# remote prefix that overlaps another tenant's topic prefix.

# The remote prefix starts with (or equals) the other tenant's topic prefix.
remote_overlaps contains [name, i, remote, other, prefix] if {
	count(candidates) > 0
	some [remote, name, i] in remote_entries
	some prefix in lib.leading_candidates(remote, candidates, candidate_lengths)
	some [other, _] in lib.topic_prefix_owners[prefix]
	other != name
}

# The other tenant's topic prefix starts with the remote prefix. `writers`, the
# flows that write topics under `remote`, is a comprehension in the rule body
# that closes over `remote`: OPA indexes it (one pass over remote_entries,
# grouped by remote prefix), where an object of every remote prefix's flows
# built by a nested comprehension took a pass per prefix, quadratic in the
# estate (bench/scale.py; 2 s of 8 at 5,000 tenants once one overlap existed).
remote_overlaps contains [name, i, remote, other, prefix] if {
	count(candidates) > 0
	some [prefix, other] in lib.topic_prefix_entries
	some remote in lib.leading_candidates(prefix, candidates, candidate_lengths)
	writers := {[name, i] | some [r, name, i] in remote_entries; r == remote}
	some [name, i] in writers
	other != name
}
