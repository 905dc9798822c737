# A KafkaUser's ACLs stay inside its tenant's names and give no more than
# mm2gov would (compile/acls.py): a principal what its access implies, a
# flow's MirrorMaker 2 what it needs to mirror. The KafkaUser's name is the
# Kafka user name (principal User:<name>). DENY ACLs only narrow, so they pass.
package mm2gov.admission.rules.users

import data.mm2gov.admission.lib

checked if {
	lib.kind == "KafkaUser"
	lib.content_checked
	lib.tenant
}

user := lib.name

mm2_flows := lib.user_flows(user)

access := lib.principal_access(user)

# The user is one of the tenant's: a principal, a flow's MirrorMaker 2, or its probe.
known if count(mm2_flows) > 0

known if probe

known if count(access) > 0

authorization := a if {
	a := lib.spec.authorization
	is_object(a)
} else := {}

acls_field := object.get(authorization, "acls", [])

# [index, acl] of every ALLOW ACL (Strimzi's default type) that is an object.
allow_acls := [[i, acl] |
	is_array(acls_field)
	some i, acl in acls_field
	is_object(acl)
	object.get(acl, "type", "allow") != "deny"
]

resource(acl) := r if {
	r := acl.resource
	is_object(r)
} else := {}

resource_type(acl) := lib.as_string(object.get(resource(acl), "type", ""))

resource_name(acl) := object.get(resource(acl), "name", "")

pattern_type(acl) := object.get(resource(acl), "patternType", "literal")

# Operations of an ACL: `operations`, and the legacy single `operation`.
acl_operations(acl) := {op | some op in acl.operations} | {op | op := acl.operation}

acl_path(i, rest) := lib.pointer(array.concat(["spec", "authorization", "acls", i], rest))

# A name that covers every resource of its type.
wildcard_name(name) if name in {"*", ""}

wildcard_name(name) if not is_string(name)

named_types := {"topic", "group"}

# The tenant's names per resource type: its prefixes, the remote prefixes of
# its flows and its MirrorMaker 2s' internal prefixes (acls.py).
own_scope("topic") := ({p | some p in lib.tenant.topic_prefixes} | lib.all_remote_prefixes) | lib.internal_prefixes

own_scope("group") := {p | some p in lib.tenant.group_prefixes} | lib.internal_prefixes

# Granted topics are looked up only for names outside the tenant's own: unless
# mm2gov pushed data.mm2gov_scopes, the lookup walks every tenant's grants.
in_scope(rtype, name) if lib.inside(name, own_scope(rtype))

in_scope("topic", name) if {
	not lib.inside(name, own_scope("topic"))
	lib.inside(name, lib.granted_prefixes)
}

scope_text("topic") := lib.text_list(own_scope("topic") | lib.granted_prefixes)

scope_text("group") := lib.text_list(own_scope("group"))

# ---- what each user may do ----------------------------------------------------

# [resource type, prefixes, operations] the user may have; cluster ACLs carry
# no name, which the prefix "" covers.
role_entries contains entry if {
	some flow in mm2_flows
	some entry in mm2_entries(flow)
}

role_entries contains ["topic", lib.tenant.topic_prefixes, ops] if {
	ops := {op | some a in access; some op in principal_topic_operations[a]}
	count(ops) > 0
}

role_entries contains ["group", lib.tenant.group_prefixes, {"Read"}] if "read" in access

# Readers consume the tenant's remote topics on its flows' targets.
role_entries contains ["topic", lib.all_remote_prefixes, {"Read", "Describe"}] if "read" in access

principal_topic_operations := {"read": {"Read", "Describe"}, "write": {"Write", "Describe"}}

# acls.py mm2_scope, source and target side together: a KafkaUser does not
# say which alias its Strimzi cluster is. Nothing on the CLUSTER resource
# (DESCRIBE there lists every tenant's ACLs and SCRAM users). Read on the
# tenant's groups and remote topics: the checkpoint connector commits the
# groups' translated offsets on the target.
mm2_entries(flow) := [
	["topic", lib.tenant.topic_prefixes, {"Read", "Describe", "DescribeConfigs"}],
	["group", lib.tenant.group_prefixes, {"Read", "Describe"}],
	["topic", lib.remote_prefixes(flow), {"Create", "Read", "Write", "Alter", "AlterConfigs", "Describe", "DescribeConfigs"}],
	["topic", [lib.internal_prefix(flow)], {"Create", "Read", "Write", "Describe", "DescribeConfigs"}],
	["group", [lib.internal_prefix(flow)], {"Read", "Describe"}],
]

# Transactional ids: only an exactly_once flow's MirrorMaker 2 has any
# (acls.py mm2_scope, names.py mm2_transactional_ids), Write and Describe on
# names inside its tasks' prefix, and on its Connect leader's one id as a
# literal: a prefix there, `connect-cluster-` alone or another flow's names
# reach other MirrorMaker 2s' transactions.
transactional_permitted(rtype, name, ptype) := {"Write", "Describe"} if {
	rtype == "transactionalId"
	some flow in mm2_flows
	lib.exactly_once(flow)
	own_transactional_id(flow.transactional_ids, name, ptype)
} else := set()

own_transactional_id(ids, name, _) if startswith(name, ids.tasks)

own_transactional_id(ids, name, "literal") if name == ids.leader

# The tenant's probe (acls.py probe_scope): Create, Write and Describe on each
# slo flow's probe topic, Read and Describe on its remote name, both LITERAL
# (a prefix would reach names the probe does not own); no group, nothing else.
probe if user in lib.probe_users

probe_permitted(rtype, name, ptype) := {op |
	rtype == "topic"
	ptype == "literal"
	probe
	some flow in lib.probe_flows
	some [topic, ops] in [[flow.probe.topic, {"Create", "Write", "Describe"}], [flow.probe.remote_topic, {"Read", "Describe"}]]
	name == topic
	some op in ops
}

own_permitted(rtype, name) := {op |
	some [t, prefixes, ops] in role_entries
	t == rtype
	lib.inside(name, prefixes)
	some op in ops
}

# Readers also read the topics other tenants grant them (acls.py).
granted_permitted(rtype, name) := {"Read", "Describe"} if {
	rtype == "topic"
	"read" in access
	lib.inside(name, lib.granted_prefixes)
} else := set()

role_text := sprintf("the probe user of tenant %s", [lib.tenant_name]) if {
	probe
} else := sprintf("the MirrorMaker 2 user of flow %s", [lib.text_list([lib.flow_id(f) | some f in mm2_flows])]) if {
	count(mm2_flows) > 0
} else := sprintf("principal User:%s (access %s)", [user, lib.text_list(access)])

# ---- client quotas (docs/capacity.md) ------------------------------------------------

# [Strimzi key, the repo's rate, flow id] a flow's MirrorMaker 2 user must
# carry in spec.quotas, for every flow with capacity (sized by mm2gov, the
# flow's `sizing`): its fetch quota where it lands on the flow's source, its
# produce quota on the target. An object whose cluster is unknown is held to
# both: the lowest quota the repo gives its user anywhere.
expected_quotas contains [key, rate, sprintf("the MirrorMaker 2 user of flow %s, whose capacity", [lib.flow_id(flow)])] if {
	some flow in mm2_flows
	sizing := object.get(flow, "sizing", null)
	is_object(sizing)
	some [key, rate, end] in [
		["consumerByteRate", sizing.source_fetch_byte_rate, "source"],
		["producerByteRate", sizing.target_produce_byte_rate, "target"],
	]
	quota_applies(flow[end])
}

# A tenant principal that declares a quota carries each of its keys, on every
# cluster (compile/quotas.py sets it wherever the principal has ACLs).
expected_quotas contains [key, rate, sprintf("principal User:%s, whose quota in its tenant's file", [user])] if {
	some p in lib.tenant.principals
	p.name == concat("", ["User:", user])
	quota := object.get(p, "quota", null)
	is_object(quota)
	some [key, field] in [
		["producerByteRate", "producer_byte_rate"],
		["consumerByteRate", "consumer_byte_rate"],
		["requestPercentage", "request_percentage"],
	]
	rate := object.get(quota, field, null)
	rate != null
}

quota_applies(alias) if lib.object_cluster == alias

quota_applies(_) if lib.object_cluster == ""

quotas_field := q if {
	q := lib.spec.quotas
	is_object(q)
} else := {}

quota_within(value, rate) if {
	is_number(value)
	value >= 0
	value <= rate
}

# ---- rules ------------------------------------------------------------------------

violations contains lib.violation("admission_user_unknown", "high", msg, "metadata/name") if {
	checked
	not known
	msg := sprintf(
		"%s is neither a principal of tenant %s (%s) nor the MirrorMaker 2 user of one of its flows (%s); name the KafkaUser after one of them, or add User:%s to tenants/%s.yaml principals first",
		[
			lib.subject, lib.tenant_name, users_text(lib.principal_users),
			users_text({lib.mm2_user(f) | some f in lib.flows}), user, lib.tenant_name,
		],
	)
}

users_text(users) := lib.text_list(users) if {
	count(users) > 0
} else := "none"

violations contains lib.violation("admission_user_acl_wildcard", "critical", msg, path) if {
	checked
	some [i, acl] in allow_acls
	rtype := resource_type(acl)
	rtype != "cluster"
	name := resource_name(acl)
	wildcard_name(name)
	path := acl_path(i, ["resource", "name"])
	msg := sprintf(
		"%s: ACL %d allows %s on %s name '%v', which covers every %s of the cluster; name a %s inside tenant %s's names (%s)",
		[lib.subject, i, lib.text_list(acl_operations(acl)), rtype, name, rtype, rtype, lib.tenant_name, wildcard_scope_text(rtype)],
	)
}

wildcard_scope_text(rtype) := scope_text(rtype) if {
	rtype in named_types
} else := "mm2gov grants none of this type"

violations contains lib.violation("admission_user_acl_outside_scope", "high", msg, path) if {
	checked
	some [i, acl] in allow_acls
	rtype := resource_type(acl)
	rtype in named_types
	name := resource_name(acl)
	not wildcard_name(name)
	not in_scope(rtype, name)
	path := acl_path(i, ["resource", "name"])
	msg := sprintf(
		"%s: ACL %d allows %s on %s %s '%s', which is outside tenant %s's %s names (%s); use a name that starts with one of those prefixes, separator included",
		[lib.subject, i, lib.text_list(acl_operations(acl)), rtype, pattern_type(acl), name, lib.tenant_name, rtype, scope_text(rtype)],
	)
}

# Topic and group ACLs inside the tenant's names, and every other resource
# type, are held to what the user's role may do there.
operation_checked(rtype, name) if {
	rtype in named_types
	not wildcard_name(name)
	in_scope(rtype, name)
}

operation_checked(rtype, _) if not rtype in named_types

violations contains lib.violation("admission_user_acl_operation", "high", msg, path) if {
	checked
	known
	some [i, acl] in allow_acls
	rtype := resource_type(acl)
	name := resource_name(acl)
	operation_checked(rtype, name)
	own := (own_permitted(rtype, name) | transactional_permitted(rtype, name, pattern_type(acl))) | probe_permitted(rtype, name, pattern_type(acl))
	extra := acl_operations(acl) - own
	count(extra) > 0
	beyond := extra - granted_permitted(rtype, name)
	count(beyond) > 0
	permitted := own | granted_permitted(rtype, name)
	path := acl_path(i, ["operations"])
	msg := sprintf(
		"%s: ACL %d allows %s on %s, beyond what %s may do there (%s); remove %s",
		[lib.subject, i, lib.text_list(beyond), resource_text(rtype, acl), role_text, permitted_text(permitted), lib.text_list(beyond)],
	)
}

resource_text("cluster", _) := "the cluster"

resource_text(rtype, acl) := sprintf("%s %s '%v'", [rtype, pattern_type(acl), resource_name(acl)]) if rtype != "cluster"

permitted_text(ops) := lib.text_list(ops) if {
	count(ops) > 0
} else := "nothing: mm2gov grants it no such ACL"

# The password a KafkaUser gets (spec.authentication.password.valueFrom.
# secretKeyRef), like any Secret its spec names, is the user's own: one of
# the names mm2gov derived for this user (tenant.names.principal_secrets,
# flow.mm2_secrets). Another Secret would set this user's password to
# another user's, or to an admin's.
own_secrets := lib.user_secrets(user)

violations contains lib.violation("admission_user_secret", "critical", msg, path) if {
	checked
	some ref in input.secret_refs
	[path, secret, _] := ref
	not secret in own_secrets
	msg := sprintf(
		"%s: %s names secret '%v', which is not one of user %s's own credential Secrets (%s); take the password from the user's own Secret",
		[lib.subject, path, secret, user, users_text(own_secrets)],
	)
}

# ---- shape ----------------------------------------------------------------------

violations contains lib.violation("admission_object_malformed", "high", msg, "spec/authorization") if {
	checked
	not is_object(object.get(lib.spec, "authorization", {}))
	msg := sprintf("%s: spec.authorization is not an object; write it as {type: simple, acls: [...]}", [lib.subject])
}

violations contains lib.violation("admission_object_malformed", "high", msg, "spec/authorization/acls") if {
	checked
	not is_array(acls_field)
	msg := sprintf("%s: spec.authorization.acls is not a list; write the ACLs as a list", [lib.subject])
}

violations contains lib.violation("admission_object_malformed", "high", msg, path) if {
	checked
	is_array(acls_field)
	some i, acl in acls_field
	not well_formed(acl)
	path := acl_path(i, [])
	msg := sprintf(
		"%s: ACL %d is not {resource: {type, name, patternType}, operations: [...]}; write it in Strimzi's shape",
		[lib.subject, i],
	)
}

well_formed(acl) if {
	is_object(acl.resource)
	is_array(acl.operations)
}

well_formed(acl) if {
	is_object(acl.resource)
	is_string(acl.operation)
}

# A flow's MirrorMaker 2 user without its quota, or above it, would take more
# than its capacity during a catch-up: the share of every other flow there.
violations contains lib.violation("admission_user_quota", "high", msg, sprintf("spec/quotas/%s", [key])) if {
	checked
	some [key, rate, whose] in expected_quotas
	value := object.get(quotas_field, key, null)
	not quota_within(value, rate)
	msg := sprintf(
		"%s is %s holds it to %s %d on this cluster (docs/capacity.md); spec.quotas.%s is %s: set it to %d or less",
		[lib.subject, whose, key, rate, key, quota_text(value), rate],
	)
}

quota_text(null) := "missing"

quota_text(value) := sprintf("%v", [value]) if value != null
