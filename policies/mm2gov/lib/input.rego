# Input helpers shared by every rule (docs/policies.md): locations, the
# violation shape, and indexes over the whole repo built once per evaluation.
#
# The indexes are complete rules (objects built by comprehensions that OPA
# indexes), computed once per evaluation; every lookup after that is a plain
# object access, which keeps the library linear in the number of tenants.
# Partial object rules (`p[k] := v`, `p[k] contains v`) are avoided on
# purpose: OPA builds them in time quadratic in their size.
package mm2gov.lib.input

import data.mm2gov.lib.names

# The `file:line` of a node path such as "tenants/payments/flows/0/topics/1",
# else of its nearest ancestor that has one, else the path itself. mm2gov
# sends no locations (they would double the input) and resolves the paths it
# gets back to `file:line` itself; tests and other callers may send them.
location(path) := loc if {
	loc := input.locations[path]
} else := input.locations[concat("/", array.slice(parts, 0, found[0]))] if {
	parts := split(path, "/")
	found := [k |
		some k in numbers.range(count(parts), 1)
		input.locations[concat("/", array.slice(parts, 0, k))]
	]
	count(found) > 0
} else := path

# A violation as the decision reports it; `tenant` is "" for cluster rules.
violation(rule, severity, tenant, message, loc) := {
	"rule": rule,
	"severity": severity,
	"tenant": tenant,
	"message": message,
	"location": loc,
}

# The name messages use for a flow: its id, else "<source>-to-<target>".
flow_id(flow) := id if {
	id := flow.id
} else := sprintf("%s-to-%s", [flow.source, flow.target])

# "[a., b.]": a list of prefixes as messages show it.
list_text(items) := sprintf("[%s]", [concat(", ", items)])

# A regex that stays inside `prefix`: "payments." -> "payments\..*".
anchored_example(prefix) := concat("", [replace(prefix, ".", "\\."), ".*"])

# Remote-topic prefixes a flow creates on its target: the flow's
# `remote_prefix` (mm2gov computes it in governance/model/names.py: "<source>."
# for MM2's DefaultReplicationPolicy, "" for IdentityReplicationPolicy)
# before each topic prefix.
remote_topic_prefixes(tenant, flow) := [concat("", [flow.remote_prefix, prefix]) | some prefix in tenant.topic_prefixes]

# flow_remote_prefixes[tenant][i] = remote_topic_prefixes of the tenant's flow i.
flow_remote_prefixes := {name: [remote_topic_prefixes(tenant, flow) | some flow in tenant.flows] |
	some name, tenant in input.tenants
}

# [text, tenant] entries of every tenant's topic prefixes (a set).
topic_prefix_entries := {[prefix, name] |
	some name, tenant in input.tenants
	some prefix in tenant.topic_prefixes
}

# [text, tenant] entries of every tenant's group prefixes (a set).
group_prefix_entries := {[prefix, name] |
	some name, tenant in input.tenants
	some prefix in tenant.group_prefixes
}

# topic_prefix_owners[prefix] = {[tenant, index], ...}: who declares a topic
# prefix. Built only when a rule found a candidate overlap.
#
# These indexes group entries by a key. Built as an object comprehension whose
# value is a comprehension over every tenant, OPA would take a pass over the
# tenants per key: quadratic in the estate (bench/scale.py). Each is built from
# a set of [key, group] pairs instead, whose group is a comprehension in a rule
# body closing over the key: that one OPA indexes (comprehension indexing: one
# pass, grouped by the key).
topic_prefix_owners := {prefix: owners | some [prefix, owners] in topic_prefix_groups}

topic_prefix_groups contains [prefix, owners] if {
	some tenant in input.tenants
	some prefix in tenant.topic_prefixes
	owners := {[name, i] | some name, t in input.tenants; t.topic_prefixes[i] == prefix}
}

# group_prefix_owners[prefix] = {[tenant, index], ...}: who declares a group prefix.
group_prefix_owners := {prefix: owners | some [prefix, owners] in group_prefix_groups}

group_prefix_groups contains [prefix, owners] if {
	some tenant in input.tenants
	some prefix in tenant.group_prefixes
	owners := {[name, i] | some name, t in input.tenants; t.group_prefixes[i] == prefix}
}

# principal_tenants[principal] = {tenant, ...}: who declares a principal.
principal_tenants := {principal: tenants | some [principal, tenants] in principal_groups}

principal_groups contains [principal, tenants] if {
	some tenant in input.tenants
	some p in tenant.principals
	principal := p.name
	tenants := {name | some name, t in input.tenants; t.principals[_].name == principal}
}

# Overlap candidates. `entries` is a set of [text, owner] pairs. Sorted, the
# entries whose text starts with a text x come right after x's entries, so a
# text that is a leading part of, or equal to, a text of another entry is
# followed by a text that starts with it: one pass over neighbours (after a
# native sort) finds all such "shorter side" texts. Rules then work out the
# pairs for these few texts only, instead of comparing every two tenants.
shorter_sides(entries) := {text |
	sorted := sort(entries)
	some i in numbers.range(1, count(sorted) - 1)
	text := sorted[i - 1][0]
	startswith(sorted[i][0], text)
}

# Texts of `entries` (a set of [text, owner] pairs) that two owners share. None when there are as many
# texts as entries, the usual answer, found with one set (a pass over the sorted entries costs several
# times that).
shared_texts(entries) := set() if {
	count({text | some [text, _] in entries}) == count(entries)
} else := {text |
	sorted := sort(entries)
	some i in numbers.range(1, count(sorted) - 1)
	text := sorted[i - 1][0]
	sorted[i][0] == text
}

# The texts of `candidates` (whose lengths are `lengths`) that `text` starts
# with, itself included: one set lookup per candidate length.
leading_candidates(text, candidates, lengths) := {stem |
	n := count(text)
	some k in lengths
	k <= n
	stem := substring(text, 0, k)
	stem in candidates
}

# Grants: a grant's topic that opens everything.
wildcard_grant_topics := {"*", ".*", ""} | names.separators

# A grant no grant_* rule objects to: it appears in scopes.
grant_valid(tenant, grant) if {
	input.tenants[grant.to]
	count({access | some access in grant.access} - {"read"}) == 0
	count([topic |
		some topic in grant.topics
		not grant_topic_ok(topic, tenant.topic_prefixes)
	]) == 0
}

grant_topic_ok(topic, prefixes) if {
	not topic in wildcard_grant_topics
	strings.any_prefix_match(topic, prefixes)
}

# Where the tenant's own topics live: its `clusters` when given, else the
# sources of its flows, else every cluster its classification may reach (a
# restricted tenant never gets ACLs on a cluster in zone cloud by default).
home_clusters(tenant) := sort(tenant.clusters) if {
	count(object.get(tenant, "clusters", [])) > 0
} else := sort({f.source | some f in tenant.flows}) if {
	count(tenant.flows) > 0
} else := sort([alias |
	some alias, cluster in input.clusters
	default_home(tenant, cluster)
])

default_home(tenant, _) if tenant.classification != "restricted"

default_home(tenant, cluster) if {
	tenant.classification == "restricted"
	cluster.zone != "cloud"
}
