# Names no tenant may claim, and derived names two owners may never share.
#
# mm2gov computes every derived name (flow ids, MM2 principals, secret names,
# namespaces) and the reserved names (its own, Kafka's, MirrorMaker 2's,
# unauthenticated and admin identities) in governance/model/names.py and sends
# them in the input: `input.reserved` and each tenant's `names` and flows'
# derived fields. These rules only compare them.
package mm2gov.rules.reserved

import data.mm2gov.lib.input as lib

kinds := {"topic": "topic_prefixes", "group": "group_prefixes"}

reserved(kind) := object.get(object.get(input, "reserved", {}), kind, [])

# A prefix claims a reserved entry when their names can coincide: a reserved
# prefix and the tenant's prefix overlap, or a reserved name starts with it.
claims(prefix, entry) if {
	entry.prefix
	startswith(prefix, entry.text)
}

claims(prefix, entry) if startswith(entry.text, prefix)

# The prefixes that can claim a reserved entry of `kind`, found with two native prefix matches against all
# the entries at once (most prefixes claim nothing: only these are compared with each entry).
may_claim(kind, prefix) if strings.any_prefix_match(reserved_texts[kind], prefix)

may_claim(kind, prefix) if strings.any_prefix_match(prefix, reserved_prefixes[kind])

reserved_texts[kind] := {entry.text | some entry in reserved(kind)} if some kind, _ in kinds

reserved_prefixes[kind] := {entry.text | some entry in reserved(kind); entry.prefix} if some kind, _ in kinds

violations contains lib.violation("reserved_name_claimed", "critical", name, msg, loc) if {
	some kind, field in kinds
	some name, tenant in input.tenants
	some i, prefix in tenant[field]
	may_claim(kind, prefix)
	some entry in reserved(kind)
	claims(prefix, entry)
	msg := sprintf(
		"tenant %s: %s prefix '%s' covers the reserved %s '%s' (%s); no tenant may claim it, so choose a prefix made of the tenant's own name, e.g. '%s%s'",
		[name, kind, prefix, what(entry), entry.text, entry.why, name, separator[kind]],
	)
	loc := lib.location(sprintf("tenants/%s/%s/%d", [name, field, i]))
}

separator := {"topic": ".", "group": "-"}

what(entry) := "prefix" if entry.prefix

what(entry) := "name" if not entry.prefix

# Principals: the unauthenticated identity, the super user and every flow's
# MirrorMaker 2 user are not a tenant's to declare, in any form an authority
# may take for the same name: mm2gov sends each name's canonical form
# (names.canonical: case folded, blanks and invisible characters removed,
# compatibility forms folded), so User:Admin and User:MM2-<flow> claim them too.
canonical_principal(principal) := object.get(principal, "canonical", lower(principal.name))

canonical_entry(entry) := object.get(entry, "canonical", lower(entry.text))

violations contains lib.violation("reserved_principal", "critical", name, msg, loc) if {
	some name, tenant in input.tenants
	some i, principal in tenant.principals
	canonical := canonical_principal(principal)
	startswith(canonical, "user:")
	user := substring(canonical, 5, -1)
	may_claim_user(user)
	some entry in reserved("user")
	canonical_claims(user, entry)
	msg := sprintf(
		"tenant %s: principal %s is reserved (%s); a tenant's ACLs on it would reach clients that are not the tenant's, so name a principal of the tenant's own, e.g. User:%s-app",
		[name, principal.name, entry.why, name],
	)
	loc := lib.location(sprintf("tenants/%s/principals/%d/name", [name, i]))
}

# The users that can claim a reserved user (canonical_claims), by a set lookup and a native prefix match.
may_claim_user(user) if user in reserved_users

may_claim_user(user) if strings.any_prefix_match(user, reserved_user_prefixes)

reserved_users := {canonical_entry(entry) | some entry in reserved("user")}

reserved_user_prefixes := {canonical_entry(entry) | some entry in reserved("user"); entry.prefix}

user_claims(user, entry) if {
	entry.prefix
	startswith(user, entry.text)
}

user_claims(user, entry) if user == entry.text

canonical_claims(user, entry) if {
	entry.prefix
	startswith(user, canonical_entry(entry))
}

canonical_claims(user, entry) if user == canonical_entry(entry)

# Kafka refuses a topic whose name differs from an existing one only by '.'
# against '_' (their metric names collide): two tenants whose prefixes are
# equal up to that can block each other's topics.
normalized(prefix) := replace(prefix, ".", "_")

normalized_entries := {[normalized(prefix), name] |
	some name, tenant in input.tenants
	some prefix in tenant.topic_prefixes
}

violations contains lib.violation("prefix_collision", "high", name, msg, loc) if {
	some [name, i, prefix, other, other_prefix] in collisions
	msg := sprintf(
		"tenant %s: topic prefix '%s' and tenant %s's '%s' differ only by '.' against '_', which Kafka treats as the same topic name (it refuses the second of two such topics), so one tenant can block the other's topics; rename one of them",
		[name, prefix, other, other_prefix],
	)
	loc := lib.location(sprintf("tenants/%s/topic_prefixes/%d", [name, i]))
}

# [normalized prefix, tenant, index, prefix] of every tenant's topic prefixes.
normalized_prefixes contains [normalized(prefix), name, i, prefix] if {
	some name, tenant in input.tenants
	some i, prefix in tenant.topic_prefixes
}

# [tenant, index, prefix, other tenant, other prefix] for both sides of every pair of two tenants' topic
# prefixes whose normalized forms overlap (one starts with the other) while the prefixes as written do not
# (prefix_overlap reports those). Each pair is found from its longer (or equal) side, whose normalized form
# starts with a candidate shorter side (lib.shorter_sides); the prefixes normalized to that stem are a
# comprehension closing over it, which OPA indexes: no pass over every tenant per candidate.
collisions contains entry if {
	candidates := lib.shorter_sides(normalized_entries)
	count(candidates) > 0
	lengths := {count(c) | some c in candidates}
	some [norm, name, i, prefix] in normalized_prefixes
	some stem in lib.leading_candidates(norm, candidates, lengths)
	shorter := {[other, j, other_prefix] | some [n, other, j, other_prefix] in normalized_prefixes; n == stem}
	some [other, j, other_prefix] in shorter
	other != name
	not startswith(prefix, other_prefix)
	not startswith(other_prefix, prefix)
	some entry in [[name, i, prefix, other, other_prefix], [other, j, other_prefix, name, prefix]]
}

# ---- derived names: one owner each ------------------------------------------

# [key, owner id] of every derived name: the key says what the name is ([kind, the name's parts]), the
# owner id what must be unique behind it: the exact principal for its secrets (one principal declared by
# two tenants is principal_in_two_tenants), the flow for its id, the tenant for its namespace. No text is
# formatted here: most repos have no collision, and `derived` (the texts messages need) is built only
# when one is found (about a third of the policy's time on a large estate when it was built every time).
derived_keys contains [["flow id", flow.id], flow_owner(name, flow)] if {
	some name, tenant in input.tenants
	some flow in tenant.flows
}

derived_keys contains [["secret name", secret], principal.name] if {
	some tenant in input.tenants
	some i, principal in tenant.principals
	some secret in object.get(object.get(tenant, "names", {}), "principal_secrets", [])[i]
}

derived_keys contains [["secret name", secret], flow.mm2_principal] if {
	some tenant in input.tenants
	some flow in tenant.flows
	some secret in object.get(flow, "mm2_secrets", [])
}

derived_keys contains [["principal", canonical_principal(principal)], principal.name] if {
	some tenant in input.tenants
	some principal in tenant.principals
}

# The Kubernetes objects of each flow on a Strimzi target (KafkaMirrorMaker2, the KafkaTopic of each exact
# remote topic), named by governance/model/names.py: two topics whose names fold to one object name would
# make one object of two, and the second topic would be dropped.
derived_keys contains [["object", obj.kind, obj.namespace, obj.name], obj.owner] if {
	some tenant in input.tenants
	some flow in tenant.flows
	some obj in object.get(flow, "k8s_objects", [])
}

derived_keys contains [["namespace", tenant.names.namespace], name] if {
	some name, tenant in input.tenants
}

flow_owner(name, flow) := sprintf("tenant %s's flow %s -> %s", [name, flow.source, flow.target])

# How messages name a key.
key_text(["flow id", id]) := sprintf("flow id %s", [id])

key_text(["secret name", secret]) := sprintf("secret name %s", [secret])

key_text(["principal", canonical]) := sprintf("principal %s (in its canonical form)", [canonical])

key_text(["object", kind, namespace, object_name]) := sprintf("%s %s/%s", [kind, namespace, object_name])

key_text(["namespace", namespace]) := sprintf("namespace %s", [namespace])

# Keys that two different owners share.
shared_keys := lib.shared_texts(derived_keys)

# [key, owner id, owner as messages name it, tenant, node path] of every derived name whose key is shared
# (the entries of derived_keys, with what a message says of them).
derived contains [key, owner, owner, name, sprintf("tenants/%s/flows/%d", [name, i])] if {
	some name, tenant in input.tenants
	some i, flow in tenant.flows
	key := ["flow id", flow.id]
	key in shared_keys
	owner := flow_owner(name, flow)
}

derived contains [key, principal.name, sprintf("tenant %s's principal %s", [name, principal.name]), name, sprintf("tenants/%s/principals/%d/name", [name, i])] if {
	some name, tenant in input.tenants
	some i, principal in tenant.principals
	some secret in object.get(object.get(tenant, "names", {}), "principal_secrets", [])[i]
	key := ["secret name", secret]
	key in shared_keys
}

derived contains [key, flow.mm2_principal, sprintf("tenant %s's flow %s -> %s (its MirrorMaker 2)", [name, flow.source, flow.target]), name, sprintf("tenants/%s/flows/%d", [name, i])] if {
	some name, tenant in input.tenants
	some i, flow in tenant.flows
	some secret in object.get(flow, "mm2_secrets", [])
	key := ["secret name", secret]
	key in shared_keys
}

derived contains [key, principal.name, sprintf("tenant %s's principal %s", [name, principal.name]), name, sprintf("tenants/%s/principals/%d/name", [name, i])] if {
	some name, tenant in input.tenants
	some i, principal in tenant.principals
	key := ["principal", canonical_principal(principal)]
	key in shared_keys
}

derived contains [key, obj.owner, sprintf("tenant %s's flow %s -> %s (%s)", [name, flow.source, flow.target, obj.what]), name, sprintf("tenants/%s/flows/%d", [name, i])] if {
	some name, tenant in input.tenants
	some i, flow in tenant.flows
	some obj in object.get(flow, "k8s_objects", [])
	key := ["object", obj.kind, obj.namespace, obj.name]
	key in shared_keys
}

derived contains [key, name, sprintf("tenant %s", [name]), name, namespace_path(name, tenant)] if {
	some name, tenant in input.tenants
	key := ["namespace", tenant.names.namespace]
	key in shared_keys
}

namespace_path(name, tenant) := sprintf("tenants/%s/namespace", [name]) if {
	tenant.namespace
} else := sprintf("tenants/%s/name", [name])

violations contains lib.violation("derived_name_collision", "critical", name, msg, loc) if {
	count(shared_keys) > 0
	some [key, owner, shown, name, path] in derived
	others := {other | some [k, o, other, _, _] in derived; k == key; o != owner}
	msg := sprintf(
		"%s: mm2gov would derive the same %s for it and for %s, so one password, certificate, Secret, namespace, MirrorMaker 2 or Kubernetes object would serve both; rename one of them",
		[shown, key_text(key), concat(" and ", sort(others))],
	)
	loc := lib.location(path)
}

# ---- namespaces -------------------------------------------------------------

violations contains lib.violation("namespace_reserved", "critical", name, msg, loc) if {
	some name, tenant in input.tenants
	namespace := tenant.names.namespace
	some entry in reserved("namespace")
	user_claims(namespace, entry)
	msg := sprintf(
		"tenant %s: namespace %s is reserved (%s); the tenant's RBAC would let it read Secrets there, so give the tenant a namespace of its own, e.g. %s",
		[name, namespace, entry.why, name],
	)
	loc := lib.location(namespace_path(name, tenant))
}

violations contains lib.violation("namespace_reserved", "critical", name, msg, loc) if {
	some name, tenant in input.tenants
	namespace := tenant.names.namespace
	some alias, cluster in input.clusters
	object.get(cluster, "strimzi_namespace", null) == namespace
	msg := sprintf(
		"tenant %s: namespace %s is where Strimzi runs cluster %s (its operators, MirrorMaker 2s and every principal's credentials for it); the tenant's RBAC would let it read them, so give the tenant a namespace of its own, e.g. %s",
		[name, namespace, alias, name],
	)
	loc := lib.location(namespace_path(name, tenant))
}
