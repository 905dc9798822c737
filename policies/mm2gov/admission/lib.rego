# Helpers shared by the admission rules (docs/policies.md, "Admission rules"):
# the reviewed object read defensively, its tenant, and that tenant's names.
#
# The webhook answers every write of a governed kind to the Kubernetes API, so
# helpers look at data.mm2gov_repo.tenants[input.tenant] only, never at every
# tenant's scope; the one lookup that may walk all tenants (grants received)
# is a separate rule that rules reach only for names outside the tenant's own.
#
# Input fields are read through typed accessors: a missing or mistyped field
# reads as "" or {}, so no rule goes undefined on garbage and lets it through
# (fail closed); admission_input_invalid reports the garbage itself.
package mm2gov.admission.lib

import data.mm2gov.lib.input as ilib

# ---- the request -----------------------------------------------------------

operations := {"CREATE", "UPDATE", "DELETE", "CONNECT"}

# Through rules: OPA evaluates the arguments of a call before `not`, so
# `not is_object(x)` is undefined, not true, when x is. Rules below negate
# calls on values that are always defined (object.get, typed accessors).
input_is_object if is_object(input)

object_given if is_object(input.object)

string_field(key) := value if {
	value := input[key]
	is_string(value)
} else := ""

operation := string_field("operation")

kind := string_field("kind")

name := string_field("name")

namespace := string_field("namespace")

# The tenant the webhook resolved: its namespace's mm2gov.io/tenant label as the
# API server has it, or in a Strimzi namespace the repo's owner of what the
# object is (governance/admission/ownership.py). Never the object's own label:
# whoever writes an object writes its labels.
tenant_name := string_field("tenant")

# The object's own mm2gov.io/tenant label: only ever compared with tenant_name.
label_tenant := l if {
	l := labels["mm2gov.io/tenant"]
} else := null

old_tenant := string_field("old_tenant")

obj := o if {
	o := input.object
	is_object(o)
} else := {}

spec := s if {
	s := obj.spec
	is_object(s)
} else := {}

labels := l if {
	l := obj.metadata.labels
	is_object(l)
} else := {}

annotations := a if {
	a := obj.metadata.annotations
	is_object(a)
} else := {}

# DELETE (and CONNECT, which carries no object of these kinds) only needs the
# tenant checks: there is no new content to hold to the tenant's scope.
content_checked if operation in {"CREATE", "UPDATE"}

# How messages name the object: "KafkaUser payments-app".
subject := sprintf("%s %s", [kind, name]) if {
	name != ""
} else := sprintf("%s (unnamed)", [kind])

# An admission violation of the request's tenant; `path` points into the object.
violation(rule, severity, message, path) := ilib.violation(rule, severity, tenant_name, message, path)

# A JSON pointer (RFC 6901) of path segments: "/" in a key (label and
# annotation keys have one) is written "~1", "~" is written "~0".
pointer(segments) := concat("/", [escaped |
	some segment in segments
	escaped := replace(replace(sprintf("%v", [segment]), "~", "~0"), "/", "~1")
])

# `value` as a string, for fields that must be one: non-strings read as "".
as_string(value) := value if {
	is_string(value)
} else := ""

# Kafka reads booleans case-insensitively from strings ("false", "FALSE").
is_false(value) if value == false

is_false(value) if {
	is_string(value)
	lower(trim_space(value)) == "false"
}

# A cluster CA's public Secret (label mm2gov.io/kind=ca) belongs to no tenant:
# `mm2gov secrets` copies it into every namespace that holds a credential for
# the cluster, Strimzi's included. Only a CA the repo names qualifies, and only
# with public keys (ca.crt, the truststore and its password).
cluster_ca_secret if {
	kind == "Secret"
	labels["mm2gov.io/kind"] == "ca"
	name in {ca | some cluster in repo_clusters; some field in ["ca_secret", "client_ca_secret"]; ca := cluster.security[field]}
	keys := object.get(obj, "keys", null)
	is_array(keys)
	every key in keys {
		key in {"ca.crt", "ca.p12", "ca.password"}
	}
}

# ---- the tenant ------------------------------------------------------------

repo_clusters := c if {
	c := data.mm2gov_repo.clusters
	is_object(c)
} else := {}

# The request's tenant as the repo declares it; undefined when unknown, which
# keeps every kind rule quiet (admission_tenant_unknown denies instead).
tenant := data.mm2gov_repo.tenants[tenant_name]

flows := [flow | some flow in tenant.flows]

flow_id(flow) := ilib.flow_id(flow)

# The prefix of a flow's own Connect group and topics on the target, and the
# user its MirrorMaker 2 logs in as: derived by mm2gov (governance/model/names.py)
# and sent with the repo, never re-derived here.
internal_prefix(flow) := flow.internal_prefix

mm2_user(flow) := flow.mm2_user

# A flow whose MirrorMaker 2 writes transactionally (KIP-618); anything but an
# explicit exactly_once is at_least_once, which is granted no transactional id.
exactly_once(flow) if flow.delivery == "exactly_once"

remote_prefixes(flow) := ilib.remote_topic_prefixes(tenant, flow)

# Every remote-topic prefix of the tenant's flows, and their internal prefixes.
all_remote_prefixes := {prefix | some flow in flows; some prefix in remote_prefixes(flow)}

internal_prefixes := {internal_prefix(flow) | some flow in flows}

# User names (no "User:") of the tenant's principals.
principal_users := {substring(p.name, 5, -1) |
	some p in tenant.principals
	startswith(p.name, "User:")
}

# The tenant's probe user and its Secrets (names.py probe_user), sent with the
# repo when one of its flows has an slo; and the flows whose probe topics it
# writes and reads (flow.probe: the probe topic and its remote name).
probe_users := {user | user := tenant.names.probe.user}

probe_secrets := {secret | some secret in tenant.names.probe.secrets}

probe_flows := [flow | some flow in flows; is_object(object.get(flow, "probe", null))]

# Every user the tenant owns: its principals, its flows' MirrorMaker 2s and its probe.
tenant_users := (principal_users | {mm2_user(flow) | some flow in flows}) | probe_users

# The access list of a principal's user (a set: one principal may be listed twice).
principal_access(user) := {access |
	some p in tenant.principals
	p.name == concat("", ["User:", user])
	some access in p.access
}

# The flows whose MirrorMaker 2 logs in as `user`.
user_flows(user) := [flow | some flow in flows; mm2_user(flow) == user]

# Grants other tenants give this tenant, as the repo decision's scopes list
# them ({"from", "topics", "access"}: only grants the repo rules accept).
# mm2gov may push those scopes as data.mm2gov_scopes: then this is one lookup.
# Without them the grants are found by walking every tenant's grants, which
# costs milliseconds on a thousand tenants, and checked as scopes.rego does
# (read only, every topic inside the giver's prefixes).
received := grants if {
	grants := data.mm2gov_scopes[tenant_name].grants_received
} else := [{"from": giver, "topics": grant.topics, "access": grant.access} |
	some giver, other in data.mm2gov_repo.tenants
	some grant in other.grants
	grant.to == tenant_name
	count({access | some access in grant.access} - {"read"}) == 0
	every topic in grant.topics {
		ilib.grant_topic_ok(topic, other.topic_prefixes)
	}
]

# Prefixes of the topics granted to this tenant, with their remote names on
# the giver's flows' targets, as acls.py grants them.
granted_prefixes := {prefix | some grant in received; some prefix in grant.topics} | {prefix |
	some grant in received
	some flow in data.mm2gov_repo.tenants[grant.from].flows
	some prefix in ilib.remote_topic_prefixes({"topic_prefixes": grant.topics}, flow)
}

# [secret, cluster] of the secrets that hold a cluster's admin credentials or
# its CA's key (`<ca_secret>-key`, secrets/issue.py): no tenant may use or hold them.
admin_secrets := {[secret, alias] |
	some alias, cluster in repo_clusters
	secret := cluster.security.admin_credentials_secret
	is_string(secret)
} | {[secret, alias] |
	some alias, cluster in repo_clusters
	is_string(cluster.security.ca_secret)
	secret := concat("", [cluster.security.ca_secret, "-key"])
}

# The names alone, so that rules look a name up instead of walking every pair.
admin_secret_names := {secret | some [secret, _] in admin_secrets}

# The clusters' CA certificates (public): every MirrorMaker 2 may trust them.
ca_secret_names := {secret |
	some cluster in repo_clusters
	some field in ["ca_secret", "client_ca_secret"]
	secret := cluster.security[field]
	is_string(secret)
}

# The Secrets that hold a user's own credentials, by the names mm2gov derived
# (governance/model/names.py) and sent with the repo: a principal's on every
# cluster (tenant.names.principal_secrets, one list per principal), a flow's
# MirrorMaker 2's on its two clusters (flow.mm2_secrets).
user_secrets(user) := ({secret |
	some i, p in tenant.principals
	p.name == concat("", ["User:", user])
	some secret in tenant.names.principal_secrets[i]
} | {secret |
	some flow in user_flows(user)
	some secret in flow.mm2_secrets
}) | {secret |
	user in probe_users
	some secret in probe_secrets
}

# Every credential Secret of the tenant's users.
tenant_secret_names := ({secret |
	some secrets in tenant.names.principal_secrets
	some secret in secrets
} | {secret |
	some flow in flows
	some secret in flow.mm2_secrets
}) | probe_secrets

# ---- the cluster a KafkaUser or KafkaTopic lands on ------------------------

# Strimzi's operators reconcile objects labelled strimzi.io/cluster=<their
# Kafka cluster> in their namespace; clusters.yaml says which alias that is
# (its strimzi section). A label naming no such cluster falls back to the
# alias of that name.
strimzi_label := as_string(object.get(labels, "strimzi.io/cluster", ""))

object_cluster := alias if {
	some alias, cluster in repo_clusters
	cluster.strimzi_cluster == strimzi_label
	cluster.strimzi_namespace == namespace
} else := strimzi_label if {
	repo_clusters[strimzi_label]
} else := ""

# Every cluster the label may designate, whatever the namespace: the aliases
# whose Strimzi cluster has that name, and the alias of that name.
label_clusters := {alias |
	some alias, cluster in repo_clusters
	cluster.strimzi_cluster == strimzi_label
} | {alias |
	repo_clusters[strimzi_label]
	alias := strimzi_label
}

# ---- names -----------------------------------------------------------------

# `name` falls under a tenant prefix, separator included: "payments" is not
# inside "payments.", which would let a PREFIXED ACL reach "paymentsX.".
inside(name, prefixes) if {
	is_string(name)
	strings.any_prefix_match(name, prefixes)
}

# "a, b": a set or list as messages show it, sorted.
text_list(items) := concat(", ", sort([sprintf("%v", [item]) | some item in items]))
