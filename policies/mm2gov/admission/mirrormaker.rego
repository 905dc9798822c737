# A KafkaMirrorMaker2 may only mirror its tenant's names, between clusters of
# clusters.yaml, along a flow the tenant declares, with the MM2 settings that
# keep tenants apart (docs/policies.md, "Admission rules"), whoever wrote it.
#
# Two shapes are read: Strimzi's kafka.strimzi.io/v1 (spec.target.alias,
# spec.mirrors[].source.alias) and the older v1beta2 one (spec.connectCluster,
# spec.clusters[].alias, spec.mirrors[].sourceCluster/targetCluster).
package mm2gov.admission.rules.mirrormaker

import data.mm2gov.admission.lib
import data.mm2gov.lib.input as ilib

checked if {
	lib.kind == "KafkaMirrorMaker2"
	lib.content_checked
	lib.tenant
}

legacy if "connectCluster" in object.keys(lib.spec)

legacy if "clusters" in object.keys(lib.spec)

# [index, mirror] of every mirror that is an object (admission_object_malformed
# reports the others).
mirrors := [[i, mirror] |
	is_array(lib.spec.mirrors)
	some i, mirror in lib.spec.mirrors
	is_object(mirror)
]

# Per-mirror facts that several rules read are computed once per review into
# objects keyed by the mirror's index, which rules look up; paths stay
# segments until a violation needs them as a pointer.

# ends[i] = [source alias, its path segments, target alias, its path segments].
ends := {i: mirror_ends(i, mirror) | some [i, mirror] in mirrors}

mirror_ends(i, mirror) := [source, ["spec", "mirrors", i, "sourceCluster"], target, target_path] if {
	legacy
	source := lib.as_string(object.get(mirror, "sourceCluster", ""))
	[target, target_path] := legacy_target(i, mirror)
} else := [
	lib.as_string(object.get(mirror, ["source", "alias"], "")),
	["spec", "mirrors", i, "source", "alias"],
	v1_target,
	["spec", "target", "alias"],
]

legacy_target(i, mirror) := [lib.as_string(mirror.targetCluster), ["spec", "mirrors", i, "targetCluster"]] if {
	"targetCluster" in object.keys(mirror)
} else := [connect_cluster, ["spec", "connectCluster"]]

connect_cluster := lib.as_string(object.get(lib.spec, "connectCluster", ""))

v1_target := lib.as_string(object.get(lib.spec, ["target", "alias"], ""))

# [alias, path segments, role] of every cluster alias the object names.
alias_refs contains [v1_target, ["spec", "target", "alias"], "target"] if not legacy

alias_refs contains [connect_cluster, ["spec", "connectCluster"], "Connect (target)"] if legacy

alias_refs contains [source, path, "source"] if {
	some [source, path, _, _] in ends
}

alias_refs contains [target, path, "target"] if {
	some [_, _, target, path] in ends
}

# declared[i] = the tenant's flows from mirror i's source to its target.
declared := {i: flows |
	some i, [source, _, target, _] in ends
	flows := [flow | some flow in lib.flows; flow.source == source; flow.target == target]
}

# MM2 reads topicsPattern & co. as a comma-separated list (Kafka's LIST type,
# trimmed around commas) and joins the items with "|"; an empty item matches
# no real name. mm2gov's webhook analyses each item (input.patterns).
regexes(value) := [regex |
	some piece in split(value, ",")
	regex := trim_space(piece)
	regex != ""
]

pattern_fields := ["topicsPattern", "topicsExcludePattern", "groupsPattern"]

# items[i][field] = the items of mirror i's pattern field (none when unset).
items := {i: {field: regexes(lib.as_string(object.get(mirror, field, ""))) | some field in pattern_fields} |
	some [i, mirror] in mirrors
}

# facts[regex] = the facts of an item, for every item whose facts are
# complete; anything else is refused (admission_mm2_pattern_refused), never
# read as "no alternative outside". Each item is checked once however many
# rules read it (as a function, it was checked again at every call).
facts := {regex: f |
	some regex, f in input.patterns
	is_boolean(f.case_insensitive) # so f is an object: only objects have fields
	alternatives := f.alternatives
	is_array(alternatives)
	not "error" in object.keys(f)
	complete := [alt |
		some alt in alternatives
		is_string(alt.literal_prefix)
		is_boolean(alt.exact)
	]
	count(complete) > 0
	count(complete) == count(alternatives)
}

why_refused(regex) := sprintf("%v", [input.patterns[regex].error]) if {
	is_object(input.patterns[regex])
	"error" in object.keys(input.patterns[regex])
} else := "mm2gov's webhook sent no analysis of it"

# An alternative stays inside when its literal prefix starts with a tenant
# prefix (as flow_*_outside_scope decides). An exact empty alternative ("^$")
# matches no topic or group name, so it opens nothing.
alt_inside(alt, prefixes) if strings.any_prefix_match(alt.literal_prefix, prefixes)

alt_inside(alt, _) if {
	alt.exact
	alt.literal_prefix == ""
}

# [rule, field, kind, tenant prefixes field]
scope_checks := [
	["admission_mm2_topics_outside_scope", "topicsPattern", "topic", "topic_prefixes"],
	["admission_mm2_groups_outside_scope", "groupsPattern", "group", "group_prefixes"],
]

fix(prefixes) := sprintf("anchor it at one of them, e.g. '%s'", [ilib.anchored_example(prefixes[0])]) if {
	count(prefixes) > 0
} else := "the tenant declares none, so mirror nothing ('^$') or add the prefixes to the repo first"

# ---- patterns ---------------------------------------------------------------

violations contains lib.violation("admission_mm2_pattern_refused", "high", msg, path) if {
	checked
	some i, per_field in items
	some field, field_items in per_field
	some regex in field_items
	not facts[regex]
	path := lib.pointer(["spec", "mirrors", i, field])
	msg := sprintf(
		"%s: mirror %d %s item '%s' cannot be checked (%s), so it is refused; rewrite it with constructs Java and Python read alike (no \\p{..}, \\Q..\\E, named groups, nested classes, (?u)/(?U)/(?d) flags)",
		[lib.subject, i, field, regex, why_refused(regex)],
	)
}

# No pattern means MM2's default, ".*": every name of the source cluster.
violations contains lib.violation(rule, "high", msg, path) if {
	checked
	some [rule, field, kind, prefixes_field] in scope_checks
	some [i, mirror] in mirrors
	count(items[i][field]) == 0
	needed(field, mirror)
	prefixes := object.get(lib.tenant, prefixes_field, [])
	path := lib.pointer(["spec", "mirrors", i, field])
	msg := sprintf(
		"%s: mirror %d has no %s, so MirrorMaker 2 uses its default '.*' and mirrors every %s of the source cluster, outside tenant %s's %s prefixes %s; set %s and %s",
		[lib.subject, i, field, kind, lib.tenant_name, kind, ilib.list_text(prefixes), field, fix(prefixes)],
	)
}

# Groups are only read by the checkpoint connector.
needed("topicsPattern", _)

needed("groupsPattern", mirror) if "checkpointConnector" in object.keys(mirror)

violations contains lib.violation(rule, "high", msg, path) if {
	checked
	some [rule, field, kind, prefixes_field] in scope_checks
	prefixes := object.get(lib.tenant, prefixes_field, [])
	some i, per_field in items
	some regex in per_field[field]
	f := facts[regex]
	not f.case_insensitive
	outside := [literal_text(alt.literal_prefix) |
		some alt in f.alternatives
		not alt_inside(alt, prefixes)
	]
	count(outside) > 0
	path := lib.pointer(["spec", "mirrors", i, field])
	msg := sprintf(
		"%s: mirror %d %s regex '%s' can match %s names starting with %s, outside tenant %s's %s prefixes %s; %s",
		[lib.subject, i, field, regex, kind, concat(" or ", outside), lib.tenant_name, kind, ilib.list_text(prefixes), fix(prefixes)],
	)
}

violations contains lib.violation(rule, "high", msg, path) if {
	checked
	some [rule, field, kind, prefixes_field] in scope_checks
	some i, per_field in items
	some regex in per_field[field]
	facts[regex].case_insensitive
	prefixes := object.get(lib.tenant, prefixes_field, [])
	path := lib.pointer(["spec", "mirrors", i, field])
	msg := sprintf(
		"%s: mirror %d %s regex '%s' is case-insensitive ((?i)), so it can match other-case %s names outside tenant %s's %s prefixes %s; remove (?i) and %s",
		[lib.subject, i, field, regex, kind, lib.tenant_name, kind, ilib.list_text(prefixes), fix(prefixes)],
	)
}

literal_text("") := "any text"

literal_text(literal) := sprintf("'%s'", [literal]) if literal != ""

# ---- shape -------------------------------------------------------------------

# The API server has checked the CRD schema before the webhook runs, so these
# only fire on objects no Strimzi CRD admits; rules skip what they cannot read.
violations contains lib.violation("admission_object_malformed", "high", msg, "spec") if {
	checked
	not is_object(object.get(lib.obj, "spec", null))
	msg := sprintf("%s has no spec object; give it the KafkaMirrorMaker2 spec", [lib.subject])
}

# An MM2 without mirrors is an empty Connect cluster in the tenant's name: refuse it.
violations contains lib.violation("admission_object_malformed", "high", msg, "spec/mirrors") if {
	checked
	is_object(object.get(lib.obj, "spec", null))
	mirrors_value := object.get(lib.spec, "mirrors", [])
	is_array(mirrors_value)
	count(mirrors_value) == 0
	msg := sprintf("%s: spec.mirrors is missing or empty; declare the tenant's flow as one mirror", [lib.subject])
}

violations contains lib.violation("admission_object_malformed", "high", msg, "spec/mirrors") if {
	checked
	mirrors_field := lib.spec.mirrors
	not is_array(mirrors_field)
	msg := sprintf("%s: spec.mirrors is not a list; write it as a list of mirrors", [lib.subject])
}

violations contains lib.violation("admission_object_malformed", "high", msg, path) if {
	checked
	some i, mirror in lib.spec.mirrors
	not is_object(mirror)
	path := lib.pointer(["spec", "mirrors", i])
	msg := sprintf("%s: mirror %v is not an object; write each mirror as {source, sourceConnector, topicsPattern, ...}", [lib.subject, i])
}

# ---- clusters and flows -----------------------------------------------------

violations contains lib.violation("admission_mm2_cluster_unknown", "high", msg, path) if {
	checked
	some [alias, segments, role] in alias_refs
	not lib.repo_clusters[alias]
	path := lib.pointer(segments)
	msg := sprintf(
		"%s: %s cluster alias '%s' is not a cluster of clusters.yaml (%s); use one of those aliases, or add the cluster to clusters.yaml first",
		[lib.subject, role, alias, lib.text_list(object.keys(lib.repo_clusters))],
	)
}

violations contains lib.violation("admission_mm2_flow_undeclared", "high", msg, path) if {
	checked
	some i, [source, _, target, _] in ends
	lib.repo_clusters[source]
	lib.repo_clusters[target]
	count(declared[i]) == 0
	path := lib.pointer(["spec", "mirrors", i])
	msg := sprintf(
		"%s: mirror %d replicates %s -> %s, which is not a flow of tenant %s (its flows: %s); declare the flow in tenants/%s.yaml first, or mirror one of its flows",
		[lib.subject, i, source, target, lib.tenant_name, flow_pairs, lib.tenant_name],
	)
}

flow_pairs := "none" if {
	count(lib.flows) == 0
} else := lib.text_list({sprintf("%s -> %s", [flow.source, flow.target]) | some flow in lib.flows})

# ---- connector settings -----------------------------------------------------

connector_config(mirror, connector) := config if {
	config := mirror[connector].config
	is_object(config)
} else := {}

config_path(i, connector, key) := lib.pointer(["spec", "mirrors", i, connector, "config", key])

# MM2 copies source topic ACLs to the target when this is true, its default:
# ACLs mm2gov neither declares nor reviews.
violations contains lib.violation("admission_mm2_sync_topic_acls", "high", msg, path) if {
	checked
	some [i, mirror] in mirrors
	config := connector_config(mirror, "sourceConnector")
	not lib.is_false(object.get(config, "sync.topic.acls.enabled", null))
	path := config_path(i, "sourceConnector", "sync.topic.acls.enabled")
	msg := sprintf(
		"%s: mirror %d has sync.topic.acls.enabled %s, so MirrorMaker 2 copies the source's topic ACLs to the target, outside mm2gov's ACLs; set sourceConnector.config sync.topic.acls.enabled: \"false\"",
		[lib.subject, i, shown(config, "sync.topic.acls.enabled", "unset (MM2's default is true)")],
	)
}

# With offset syncs on the source (MM2's default), the mm2-offset-syncs topic
# is named by the target alias alone, so every tenant's flow between the same
# clusters shares it, and MM2 needs write access on the source.
violations contains lib.violation("admission_mm2_offset_syncs_location", "high", msg, path) if {
	checked
	some [i, mirror] in mirrors
	config := connector_config(mirror, "sourceConnector")
	not lib.is_false(object.get(config, "emit.offset-syncs.enabled", null))
	location := object.get(config, "offset-syncs.topic.location", "source")
	lower(trim_space(lib.as_string(location))) != "target"
	path := config_path(i, "sourceConnector", "offset-syncs.topic.location")
	msg := sprintf(
		"%s: mirror %d emits offset syncs with offset-syncs.topic.location %s, so they go to a topic on the source cluster that every flow to the same target shares; set sourceConnector.config offset-syncs.topic.location: target, or emit.offset-syncs.enabled: \"false\"",
		[lib.subject, i, shown(config, "offset-syncs.topic.location", "unset (MM2's default is source)")],
	)
}

shown(config, key, absent) := sprintf("'%v'", [config[key]]) if {
	key in object.keys(config)
} else := absent

# Connector settings that decide what is mirrored, or from and to where, on
# their own: a `topics`/`groups` list or a custom filter class would bypass
# topicsPattern/groupsPattern, and cluster aliases or connections set here
# would bypass spec's clusters. mm2gov controls these through spec only.
controlled_key(key) if key in {"topics", "groups", "topic.filter.class", "group.filter.class"}

controlled_key(key) if startswith(key, "source.cluster.")

controlled_key(key) if startswith(key, "target.cluster.")

violations contains lib.violation("admission_mm2_filter_override", "high", msg, path) if {
	checked
	some [i, mirror] in mirrors
	some connector in ["sourceConnector", "checkpointConnector", "heartbeatConnector"]
	some key, _ in connector_config(mirror, connector)
	controlled_key(key)
	path := config_path(i, connector, key)
	msg := sprintf(
		"%s: mirror %d %s config sets %s, which overrides what the spec says MirrorMaker 2 mirrors and between which clusters; remove it and use topicsPattern, groupsPattern and the spec's clusters",
		[lib.subject, i, connector, key],
	)
}

policy_classes := {
	"default": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
	"identity": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
}

# Remote names, hence the ACLs and KafkaTopics mm2gov derives, follow the
# flow's replication policy with MM2's "." separator.
violations contains lib.violation("admission_mm2_replication_policy", "high", msg, path) if {
	checked
	some [i, mirror] in mirrors
	[source, _, target, _] := ends[i]
	flows := declared[i]
	count(flows) > 0
	some connector in ["sourceConnector", "checkpointConnector"]
	connector in object.keys(mirror)
	config := connector_config(mirror, connector)
	class := object.get(config, "replication.policy.class", policy_classes["default"])
	expected := {policy_classes[flow.replication_policy] | some flow in flows}
	not class in expected
	path := config_path(i, connector, "replication.policy.class")
	msg := sprintf(
		"%s: mirror %d %s uses replication.policy.class '%v', but tenant %s's flow %s -> %s uses the %s policy; set replication.policy.class: %s",
		[lib.subject, i, connector, class, lib.tenant_name, source, target, lib.text_list({f.replication_policy | some f in flows}), lib.text_list(expected)],
	)
}

violations contains lib.violation("admission_mm2_replication_policy", "high", msg, path) if {
	checked
	some [i, mirror] in mirrors
	some connector in ["sourceConnector", "checkpointConnector"]
	config := connector_config(mirror, connector)
	separator := config["replication.policy.separator"]
	separator != "."
	path := config_path(i, connector, "replication.policy.separator")
	msg := sprintf(
		"%s: mirror %d %s sets replication.policy.separator '%v', but mm2gov's remote-topic prefixes and ACLs use MM2's default '.'; remove replication.policy.separator",
		[lib.subject, i, connector, separator],
	)
}

# ---- Connect group and topics -----------------------------------------------

connect_fields := ["groupId", "configStorageTopic", "offsetStorageTopic", "statusStorageTopic"]

# [the Connect cluster's spec, its path]: spec.target, or in v1beta2 the
# spec.clusters entry of connectCluster.
connect_spec := [target, ["spec", "target"]] if {
	not legacy
	target := object.get(lib.spec, "target", {})
	is_object(target)
} else := legacy_connect[0] if {
	legacy
	count(legacy_connect) > 0
} else := [{}, ["spec", "target"]]

legacy_connect := [[cluster, ["spec", "clusters", k]] |
	some k, cluster in lib.spec.clusters
	is_object(cluster)
	cluster.alias == connect_cluster
]

# Connect's group and topics left at Strimzi's defaults ("mirrormaker2-cluster",
# ...) or named outside the flow's `mm2gov.<flow-id>.` prefix are shared with,
# or taken from, another tenant's MirrorMaker 2: it would join that Connect
# cluster and run or rewrite its connectors.
violations contains lib.violation("admission_mm2_connect_names", "high", msg, path) if {
	checked
	[connect, base] := connect_spec
	some field in connect_fields
	value := object.get(connect, field, "")
	not lib.inside(value, lib.internal_prefixes)
	path := lib.pointer(array.concat(base, [field]))
	msg := sprintf(
		"%s: Connect %s %s is not under one of tenant %s's MirrorMaker 2 prefixes (%s), so it can be shared with another MirrorMaker 2; name it under its flow's prefix, e.g. '%s%s'",
		[lib.subject, field, connect_value_text(value), lib.tenant_name, none_text(lib.internal_prefixes), example_internal, connect_suffix[field]],
	)
}

connect_value_text(value) := "unset (Strimzi then uses a default every MirrorMaker 2 shares)" if {
	value == ""
} else := sprintf("'%v'", [value])

connect_suffix := {"groupId": "connect", "configStorageTopic": "configs", "offsetStorageTopic": "offsets", "statusStorageTopic": "status"}

example_internal := sort(lib.internal_prefixes)[0] if {
	count(lib.internal_prefixes) > 0
} else := sprintf("mm2gov.%s-<source>-to-<target>.", [lib.tenant_name])

none_text(items) := lib.text_list(items) if {
	count(items) > 0
} else := "none: the tenant declares no flow"

# ---- credentials ------------------------------------------------------------

# Config keys that carry credentials. config.providers.* only names providers
# (e.g. KubernetesSecretConfigProvider), the way credentials should come in.
sensitive_key(key) if {
	is_string(key)
	lowered := lower(key)
	regex.match(`password|secret|sasl\.jaas\.config|keystore\.key|ssl\.key(\.|$)`, lowered)
	not startswith(lowered, "config.providers")
}

# A config provider reference: ${provider:[path:]key}.
reference(value) if {
	is_string(value)
	regex.match(`^\s*\$\{[^}]+\}\s*$`, value)
}

# A credential value that holds no secret material: a reference, nothing, or a
# JAAS line whose secret options are all references.
credential_ok(_, value) if value == null

credential_ok(_, "")

credential_ok(_, value) if reference(value)

credential_ok(key, value) if {
	contains(lower(key), "sasl.jaas.config")
	is_string(value)
	options := regex.find_all_string_submatch_n(
		`(?i)[a-z0-9_.]*(?:password|secret|token)[a-z0-9_.]*\s*=\s*("[^"]*"|[^\s;]+)`,
		value, -1,
	)
	every option in options {
		reference(trim(option[1], `"`))
	}
}

# [config map, its path segments under spec] of every `config` Strimzi hands to Kafka
# clients or connectors. Listed, not found by walk(): walking the whole spec on every
# review cost most of the decision's time.
config_maps contains [config, ["target", "config"]] if {
	config := lib.spec.target.config
	is_object(config)
}

config_maps contains [config, ["mirrors", i, part, "config"]] if {
	some i, mirror in lib.spec.mirrors
	some part in ["source", "sourceConnector", "checkpointConnector", "heartbeatConnector"]
	config := mirror[part].config
	is_object(config)
}

config_maps contains [config, ["clusters", i, "config"]] if {
	some i, cluster in lib.spec.clusters
	config := cluster.config
	is_object(config)
}

violations contains lib.violation("admission_mm2_inline_credentials", "critical", msg, path) if {
	checked
	some [config, segments] in config_maps
	some key, value in config
	sensitive_key(key)
	not credential_ok(key, value)
	path := lib.pointer(array.concat(array.concat(["spec"], segments), [key]))
	msg := sprintf(
		"%s: %s sets %s to a literal value (not shown); credentials may only come from a Secret: use a config provider reference such as ${secrets:<namespace>/<secret>:<key>}, or the authentication's passwordSecret",
		[lib.subject, lib.pointer(array.concat(["spec"], segments)), key],
	)
}

# [authentication block, its path segments] of every cluster connection.
authentications contains [auth, ["target", "authentication"]] if {
	auth := lib.spec.target.authentication
	is_object(auth)
}

authentications contains [auth, ["mirrors", i, "source", "authentication"]] if {
	some i, mirror in lib.spec.mirrors
	auth := mirror.source.authentication
	is_object(auth)
}

authentications contains [auth, ["clusters", i, "authentication"]] if {
	some i, cluster in lib.spec.clusters
	auth := cluster.authentication
	is_object(auth)
}

# Authentication fields that take a Secret reference ({secretName, ...}); a
# string there is the credential itself.
inline_credential_fields := ["password", "clientSecret", "accessToken", "refreshToken", "clientAssertion"]

violations contains lib.violation("admission_mm2_inline_credentials", "critical", msg, path) if {
	checked
	some [auth, segments] in authentications
	some key in inline_credential_fields
	value := auth[key]
	not is_object(value)
	path := lib.pointer(array.concat(array.concat(["spec"], segments), [key]))
	msg := sprintf(
		"%s: %s has an inline %s; credentials may only come by Secret reference: use passwordSecret: {secretName: <secret>, password: <key>}",
		[lib.subject, lib.pointer(array.concat(["spec"], segments)), key],
	)
}

violations contains lib.violation("admission_mm2_inline_credentials", "critical", msg, path) if {
	checked
	some [auth, segments] in authentications
	auth.type in {"scram-sha-256", "scram-sha-512", "plain"}
	not is_object(object.get(auth, "passwordSecret", null))
	path := lib.pointer(array.concat(array.concat(["spec"], segments), ["passwordSecret"]))
	msg := sprintf(
		"%s: %s uses type %s without a passwordSecret; give the password by Secret reference: passwordSecret: {secretName: <secret>, password: <key>}",
		[lib.subject, lib.pointer(array.concat(["spec"], segments)), auth.type],
	)
}

violations contains lib.violation("admission_mm2_foreign_user", "high", msg, path) if {
	checked
	some [auth, segments] in authentications
	user := auth.username
	not user in lib.tenant_users
	path := lib.pointer(array.concat(array.concat(["spec"], segments), ["username"]))
	msg := sprintf(
		"%s: %s logs in as '%v', which is not a user of tenant %s (%s); log in as the flow's MirrorMaker 2 user mm2-<flow-id>",
		[lib.subject, lib.pointer(array.concat(["spec"], segments)), user, lib.tenant_name, none_text(lib.tenant_users)],
	)
}

violations contains lib.violation("admission_mm2_admin_credentials", "critical", msg, path) if {
	checked
	some [auth, segments] in authentications
	some field in ["passwordSecret", "certificateAndKey"]
	secret := auth[field].secretName
	secret in lib.admin_secret_names
	some [admin, alias] in lib.admin_secrets
	admin == secret
	path := lib.pointer(array.concat(array.concat(["spec"], segments), [field, "secretName"]))
	msg := sprintf(
		"%s: %s uses secret %s, which holds cluster %s's admin credentials or CA key and would bypass every ACL; use the flow's MirrorMaker 2 credentials (scram-<cluster>-mm2-<flow-id>)",
		[lib.subject, lib.pointer(array.concat(["spec"], segments)), secret, alias],
	)
}
