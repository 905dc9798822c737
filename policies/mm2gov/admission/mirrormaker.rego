# A KafkaMirrorMaker2 may only mirror its tenant's names, between clusters of
# clusters.yaml, along a flow the tenant declares, with the MM2 settings that
# keep tenants apart (docs/policies.md, "Admission rules"), whoever wrote it.
#
# Two shapes are read: Strimzi's kafka.strimzi.io/v1 (spec.target.alias,
# spec.mirrors[].source.alias) and the older v1beta2 one (spec.connectCluster,
# spec.clusters[].alias, spec.mirrors[].sourceCluster/targetCluster).
#
# Everything that decides where and as whom MirrorMaker 2 connects is held to
# the flow: bootstrap servers are the declared clusters' own, authentication is
# the flow's MM2 user with its own Secrets, every Secret the spec references
# (authentication, trusted certificates, pod volumes, env, external
# configuration) is the flow's or a cluster CA's, config maps take only
# allow-listed keys, and pod overrides that redirect names or the JVM are refused.
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

alias_refs contains [alias, ["spec", "clusters", k, "alias"], "cluster"] if {
	some k, cluster in lib.spec.clusters
	is_object(cluster)
	alias := lib.as_string(object.get(cluster, "alias", ""))
}

# declared[i] = the tenant's flows from mirror i's source to its target.
declared := {i: flows |
	some i, [source, _, target, _] in ends
	flows := [flow | some flow in lib.flows; flow.source == source; flow.target == target]
}

# Every flow some mirror declares: the flows this MirrorMaker 2 may act for.
declared_flows := {flow | some flows in declared; some flow in flows}

pattern_fields := ["topicsPattern", "topicsExcludePattern", "groupsPattern", "groupsExcludePattern"]

# items[i][field] = the items of mirror i's pattern field. MM2 reads each as
# Kafka's LIST type (split at commas, trimmed) and joins the items with "|";
# mm2gov's webhook splits them (input.mirror_patterns), so Rego never parses a
# list. A field set but not sent split stays one item, which has no facts and
# is refused; an unset field has no items.
items := {i: {field: field_items(i, mirror, field) | some field in pattern_fields} |
	some [i, mirror] in mirrors
}

field_items(i, mirror, field) := list if {
	list := input.mirror_patterns[i][field]
	is_array(list)
} else := [value] if {
	value := mirror[field]
	is_string(value)
} else := []

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

# Strimzi's served CRD may keep both shapes' fields; the rules read one shape (`legacy` picks the v1beta2
# one whenever it is present). An object carrying fields of both would be judged by one set while Strimzi
# may act on the other (join another flow's Connect group through spec.target.groupId beside a
# spec.connectCluster): an ambiguous shape is refused, naming the fields of each.
v1_shape_fields contains "spec.target" if "target" in object.keys(lib.spec)

v1_shape_fields contains sprintf("spec.mirrors[%d].source", [i]) if {
	some [i, mirror] in mirrors
	"source" in object.keys(mirror)
}

v1beta2_shape_fields contains sprintf("spec.%s", [key]) if {
	some key in ["connectCluster", "clusters"]
	key in object.keys(lib.spec)
}

v1beta2_shape_fields contains sprintf("spec.mirrors[%d].%s", [i, key]) if {
	some [i, mirror] in mirrors
	some key in ["sourceCluster", "targetCluster"]
	key in object.keys(mirror)
}

violations contains lib.violation("admission_mm2_ambiguous_shape", "high", msg, "spec") if {
	checked
	count(v1_shape_fields) > 0
	count(v1beta2_shape_fields) > 0
	msg := sprintf(
		"%s: the spec mixes Strimzi's v1 fields (%s) with v1beta2 fields (%s), which name the clusters and the Connect cluster twice; write one shape only",
		[lib.subject, concat(", ", sort(v1_shape_fields)), concat(", ", sort(v1beta2_shape_fields))],
	)
}

# A MirrorMaker 2 older than the per-flow policy needs (input.mm2_version_ok, governance/kafka/version.py
# MIN_MM2_VERSION) ignores the methods that name each flow's own offset-syncs, checkpoints and heartbeats
# topics, and shares Kafka's per-alias ones between every flow of two clusters.
violations contains lib.violation("admission_mm2_version", "high", msg, "spec/version") if {
	checked
	input.mm2_version_ok == false
	msg := sprintf(
		"%s: spec.version %v is not a Kafka release at or after %s, whose MirrorMaker 2 keeps each flow to its own internal topics through mm2gov's replication policy; set spec.version to the release mm2gov generates, or leave it unset",
		[lib.subject, lib.spec.version, input.mm2_min_version],
	)
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
# clusters shares it, and MM2 needs write access on the source. The checkpoint
# connector reads the offset syncs where offset-syncs.topic.location says.
offset_syncs_flag := {"sourceConnector": "emit.offset-syncs.enabled", "checkpointConnector": "emit.checkpoints.enabled"}

violations contains lib.violation("admission_mm2_offset_syncs_location", "high", msg, path) if {
	checked
	some [i, mirror] in mirrors
	some connector, flag in offset_syncs_flag
	connector_present(mirror, connector)
	config := connector_config(mirror, connector)
	not lib.is_false(object.get(config, flag, null))
	location := object.get(config, "offset-syncs.topic.location", "source")
	lower(trim_space(lib.as_string(location))) != "target"
	path := config_path(i, connector, "offset-syncs.topic.location")
	msg := sprintf(
		"%s: mirror %d %s has %s and offset-syncs.topic.location %s, so offset syncs go to (or are read from) a topic on the source cluster, where the flow may write nothing; set %s.config offset-syncs.topic.location: target, or %s: \"false\"",
		[lib.subject, i, connector, flag, shown(config, "offset-syncs.topic.location", "unset (MM2's default is source)"), connector, flag],
	)
}

# Strimzi runs a source connector even when the spec leaves it out.
connector_present(_, "sourceConnector")

connector_present(mirror, "checkpointConnector") if "checkpointConnector" in object.keys(mirror)

# Offset syncs, checkpoints and heartbeats go to topics the replication policy
# names: Kafka's own policies name them by cluster alias alone
# (mm2-offset-syncs.<target>.internal, <source>.checkpoints.internal,
# heartbeats), shared by every flow between the same clusters, and checkpoints
# carry groups' names and offsets (FIELD.md 4). mm2gov's Flow* policy
# (admission_mm2_replication_policy) names them from the connector's
# mm2gov.flow.* keys, which must be the flow's own names (flow.mm2_policy_config,
# derived by mm2gov): any other value points the flow's offset syncs,
# checkpoints or heartbeats at another flow's topic or a shared one.
flow_keys := ["mm2gov.flow.id", "mm2gov.flow.offset-syncs.topic", "mm2gov.flow.checkpoints.topic", "mm2gov.flow.heartbeats.topic"]

violations contains lib.violation("admission_mm2_shared_internal_topics", "high", msg, path) if {
	checked
	some [i, mirror] in mirrors
	[source, _, target, _] := ends[i]
	flows := declared[i]
	count(flows) > 0
	some connector in connectors
	connector in object.keys(mirror)
	config := connector_config(mirror, connector)
	policy_checked(connector, config)
	some key in flow_keys
	value := object.get(config, key, null)
	expected := {flow.mm2_policy_config[key] | some flow in flows}
	not value in expected
	path := config_path(i, connector, key)
	msg := sprintf(
		"%s: mirror %d %s has %s %s, but tenant %s's flow %s -> %s names its own MirrorMaker 2 topics: another value writes or reads another flow's offset syncs, checkpoints or heartbeats, or topics every flow between these clusters shares; set %s: %s",
		[lib.subject, i, connector, key, shown_value(value), lib.tenant_name, source, target, key, lib.text_list(expected)],
	)
}

# Only the source connector syncs ACLs, but no connector may say it does.
violations contains lib.violation("admission_mm2_sync_topic_acls", "high", msg, path) if {
	checked
	some [i, mirror] in mirrors
	some connector in ["checkpointConnector", "heartbeatConnector"]
	config := connector_config(mirror, connector)
	"sync.topic.acls.enabled" in object.keys(config)
	not lib.is_false(config["sync.topic.acls.enabled"])
	path := config_path(i, connector, "sync.topic.acls.enabled")
	msg := sprintf(
		"%s: mirror %d %s sets sync.topic.acls.enabled %s; mm2gov's ACLs are the only ones: set it to \"false\" or remove it",
		[lib.subject, i, connector, shown(config, "sync.topic.acls.enabled", "")],
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

connectors := ["sourceConnector", "checkpointConnector", "heartbeatConnector"]

kafka_default_policy := "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"

# Remote names, hence the ACLs and KafkaTopics mm2gov derives, follow the
# flow's replication policy with MM2's "." separator, and the flow's own
# MirrorMaker 2 topics need its Flow* class (flow.replication_policy_class,
# from mm2gov): Kafka's classes name them per cluster alias.
violations contains lib.violation("admission_mm2_replication_policy", "high", msg, path) if {
	checked
	some [i, mirror] in mirrors
	[source, _, target, _] := ends[i]
	flows := declared[i]
	count(flows) > 0
	some connector in connectors
	connector in object.keys(mirror)
	config := connector_config(mirror, connector)
	policy_checked(connector, config)
	class := object.get(config, "replication.policy.class", kafka_default_policy)
	expected := {flow.replication_policy_class | some flow in flows}
	not class in expected
	path := config_path(i, connector, "replication.policy.class")
	msg := sprintf(
		"%s: mirror %d %s uses replication.policy.class '%v', but tenant %s's flow %s -> %s uses the %s policy with its own MirrorMaker 2 topics; set replication.policy.class: %s",
		[lib.subject, i, connector, class, lib.tenant_name, source, target, lib.text_list({f.replication_policy | some f in flows}), lib.text_list(expected)],
	)
}

# The heartbeat connector reads the policy only to name its topic: held to
# the flow's policy when it sets one or emits heartbeats.
policy_checked(connector, _) if connector != "heartbeatConnector"

policy_checked("heartbeatConnector", config) if "replication.policy.class" in object.keys(config)

policy_checked("heartbeatConnector", config) if not lib.is_false(object.get(config, "emit.heartbeats.enabled", null))

violations contains lib.violation("admission_mm2_replication_policy", "high", msg, path) if {
	checked
	some [i, mirror] in mirrors
	some connector in connectors
	config := connector_config(mirror, connector)
	separator := config["replication.policy.separator"]
	separator != "."
	path := config_path(i, connector, "replication.policy.separator")
	msg := sprintf(
		"%s: mirror %d %s sets replication.policy.separator '%v', but mm2gov's remote-topic prefixes and ACLs use MM2's default '.'; remove replication.policy.separator",
		[lib.subject, i, connector, separator],
	)
}

# ---- delivery ------------------------------------------------------------------

# A flow's `delivery` decides whether its MirrorMaker 2 writes transactionally
# (KIP-618). Transactions need transactional-id ACLs, which mm2gov grants only
# an exactly_once flow's MM2 (acls.py mm2_scope): on an at_least_once flow's
# Connect workers any exactly.once.source.support but "disabled" (also
# "preparing", which makes the leader transactional) needs ids it is not
# granted. An exactly_once flow needs it "enabled" and its source consumer on
# read_committed, or it copies records twice after a crash, or copies aborted
# ones (compile/mm2.py and strimzi.py write both).
violations contains lib.violation("admission_mm2_delivery", "high", msg, path) if {
	checked
	at_least_once := [lib.flow_id(flow) | some flow in declared_flows; not lib.exactly_once(flow)]
	count(at_least_once) > 0
	some [config, segments, "worker"] in config_maps
	value := object.get(config, "exactly.once.source.support", "disabled")
	lower(trim_space(lib.as_string(value))) != "disabled"
	path := lib.pointer(array.concat(segments, ["exactly.once.source.support"]))
	msg := sprintf(
		"%s: %s sets exactly.once.source.support '%v', but tenant %s's flow %s has delivery at_least_once: its MirrorMaker 2 is granted no transactional id; remove the key, or set delivery: exactly_once on the flow in tenants/%s.yaml",
		[lib.subject, lib.pointer(segments), value, lib.tenant_name, lib.text_list(at_least_once), lib.tenant_name],
	)
}

violations contains lib.violation("admission_mm2_delivery", "high", msg, path) if {
	checked
	exactly_once := [lib.flow_id(flow) | some flow in declared_flows; lib.exactly_once(flow)]
	count(exactly_once) > 0
	[connect, base] := connect_spec
	config := object.get(connect, "config", {})
	value := object.get(config, "exactly.once.source.support", "disabled")
	not lower(trim_space(lib.as_string(value))) == "enabled"
	path := lib.pointer(array.concat(base, ["config", "exactly.once.source.support"]))
	msg := sprintf(
		"%s: Connect config exactly.once.source.support is '%v', but tenant %s's flow %s has delivery exactly_once; set exactly.once.source.support: enabled",
		[lib.subject, value, lib.tenant_name, lib.text_list(exactly_once)],
	)
}

violations contains lib.violation("admission_mm2_delivery", "high", msg, path) if {
	checked
	some [i, mirror] in mirrors
	exactly_once := [lib.flow_id(flow) | some flow in declared[i]; lib.exactly_once(flow)]
	count(exactly_once) > 0
	config := connector_config(mirror, "sourceConnector")
	value := object.get(config, isolation_key, "read_uncommitted")
	not lower(trim_space(lib.as_string(value))) == "read_committed"
	path := config_path(i, "sourceConnector", isolation_key)
	msg := sprintf(
		"%s: mirror %d sourceConnector reads the source with %s '%v', but tenant %s's flow %s has delivery exactly_once, so records of aborted transactions would be copied; set %s: read_committed",
		[lib.subject, i, isolation_key, value, lib.tenant_name, lib.text_list(exactly_once), isolation_key],
	)
}

isolation_key := "source.consumer.isolation.level"

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

users_text(items) := lib.text_list(items) if {
	count(items) > 0
} else := "none"

none_text(items) := lib.text_list(items) if {
	count(items) > 0
} else := "none: the tenant declares no flow"

# ---- connections: where and as whom -------------------------------------------

# [connection, its path segments, cluster alias, the flows it may serve] of
# every Kafka connection the spec describes, in either shape: the v1 target
# (every declared flow), each v1 mirror's source (that mirror's flows), each
# v1beta2 cluster (the declared flows with that alias as an end).
connections contains [target, ["spec", "target"], v1_target, declared_flows] if {
	target := lib.spec.target
	is_object(target)
}

connections contains [source, ["spec", "mirrors", i, "source"], alias, {flow | some flow in declared[i]}] if {
	some [i, mirror] in mirrors
	source := mirror.source
	is_object(source)
	alias := lib.as_string(object.get(source, "alias", ""))
}

connections contains [cluster, ["spec", "clusters", k], alias, flows] if {
	some k, cluster in lib.spec.clusters
	is_object(cluster)
	alias := lib.as_string(object.get(cluster, "alias", ""))
	flows := {flow | some flow in declared_flows; alias in {flow.source, flow.target}}
}

# The bootstrap servers mm2gov's webhook read from a connection, as Kafka's
# LIST type splits them (lower-cased host:port items); [] when unset.
bootstrap_items(segments) := items if {
	items := input.bootstrap_servers[lib.pointer(array.concat(segments, ["bootstrapServers"]))]
	is_array(items)
} else := []

# A declared cluster's own bootstrap servers (clusters.yaml, split by mm2gov).
cluster_servers(cluster) := {lower(item) | some item in cluster.bootstrap_server_list; is_string(item)}

# Where MirrorMaker 2 connects: only the servers clusters.yaml gives the alias.
# Another address (another cluster, a proxy, the same host under another
# name) could carry the tenant's data, and its MM2 credentials, anywhere.
violations contains lib.violation("admission_mm2_bootstrap_servers", "critical", msg, path) if {
	checked
	some [_, segments, alias, _] in connections
	cluster := lib.repo_clusters[alias]
	servers := bootstrap_items(segments)
	own := cluster_servers(cluster)
	foreign := [sprintf("%v", [item]) | some item in servers; not item in own]
	problem := servers_problem(servers, foreign)
	path := lib.pointer(array.concat(segments, ["bootstrapServers"]))
	msg := sprintf(
		"%s: %s connects to cluster %s %s; list only cluster %s's own bootstrap servers (%s), as clusters.yaml does",
		[lib.subject, lib.pointer(segments), alias, problem, alias, lib.text_list(own)],
	)
}

servers_problem(servers, foreign) := "with no bootstrapServers" if {
	count(servers) == 0
} else := sprintf("through %s, which clusters.yaml does not list for it", [concat(", ", foreign)]) if {
	count(foreign) > 0
}

# A cluster that speaks TLS is reached with TLS: without `tls` Strimzi connects
# in plain text, and SASL credentials cross the network unencrypted.
violations contains lib.violation("admission_mm2_tls", "high", msg, path) if {
	checked
	some [connection, segments, alias, _] in connections
	cluster := lib.repo_clusters[alias]
	cluster.security.protocol in {"SSL", "SASL_SSL"}
	not is_object(object.get(connection, "tls", null))
	path := lib.pointer(array.concat(segments, ["tls"]))
	msg := sprintf(
		"%s: %s connects to cluster %s (%s) without tls; add tls.trustedCertificates: [{secretName: %v, certificate: ca.crt}]",
		[lib.subject, lib.pointer(segments), alias, cluster.security.protocol, cluster.security.ca_secret],
	)
}

# Whom MirrorMaker 2 trusts as the cluster: that cluster's CA, not another
# cluster's (a server with a certificate from another CA of the estate could
# stand in for it).
violations contains lib.violation("admission_mm2_tls", "high", msg, path) if {
	checked
	some [connection, segments, alias, _] in connections
	cluster := lib.repo_clusters[alias]
	some i, trusted in connection.tls.trustedCertificates
	secret := field_of(trusted, "secretName")
	secret != null
	secret != cluster.security.ca_secret
	path := lib.pointer(array.concat(segments, ["tls", "trustedCertificates", i, "secretName"]))
	msg := sprintf(
		"%s: %s trusts secret '%v' for cluster %s, whose CA is in %v; trust the cluster's own CA",
		[lib.subject, lib.pointer(segments), secret, alias, cluster.security.ca_secret],
	)
}

# ---- authentication -----------------------------------------------------------

# Types whose credentials mm2gov issues (SCRAM and PLAIN passwords, TLS client
# certificates). `custom` runs any SASL module with any options, and OAuth
# sends credentials to a token endpoint the spec names: neither is mm2gov's.
auth_types := {"scram-sha-512", "scram-sha-256", "plain", "tls"}

password_types := {"scram-sha-512", "scram-sha-256", "plain"}

# [authentication, its path segments, the flows its connection serves].
authentications contains [auth, array.concat(segments, ["authentication"]), flows] if {
	some [connection, segments, _, flows] in connections
	auth := connection.authentication
	is_object(auth)
}

violations contains lib.violation("admission_mm2_authentication", "high", msg, path) if {
	checked
	some [connection, segments, _, _] in connections
	not is_object(object.get(connection, "authentication", null))
	path := lib.pointer(array.concat(segments, ["authentication"]))
	msg := sprintf(
		"%s: %s has no authentication, so MirrorMaker 2 connects anonymously or as its config says; authenticate as the flow's MirrorMaker 2 user: {type: scram-sha-512, username: mm2-<flow-id>, passwordSecret: {secretName: <its secret>, password: password}}",
		[lib.subject, lib.pointer(segments)],
	)
}

violations contains lib.violation("admission_mm2_authentication", "high", msg, path) if {
	checked
	some [auth, segments, _] in authentications
	not object.get(auth, "type", null) in auth_types
	path := lib.pointer(array.concat(segments, ["type"]))
	msg := sprintf(
		"%s: %s has type %v, which mm2gov does not issue credentials for (custom SASL modules and OAuth token endpoints decide themselves where credentials go); use %s",
		[lib.subject, lib.pointer(segments), shown_value(object.get(auth, "type", null)), lib.text_list(auth_types)],
	)
}

# The fields each type reads: an allow-list, so a field another type (or a
# later Strimzi) reads, such as OAuth's token endpoint and secrets or custom's
# config, cannot ride along.
auth_fields := {
	"scram-sha-512": {"type", "username", "passwordSecret"},
	"scram-sha-256": {"type", "username", "passwordSecret"},
	"plain": {"type", "username", "passwordSecret"},
	"tls": {"type", "certificateAndKey"},
}

violations contains lib.violation("admission_mm2_authentication", "high", msg, path) if {
	checked
	some [auth, segments, _] in authentications
	allowed := auth_fields[auth.type]
	some key, _ in auth
	not key in allowed
	path := lib.pointer(array.concat(segments, [key]))
	msg := sprintf(
		"%s: %s sets %s, which authentication type %s does not take (it takes %s); remove it",
		[lib.subject, lib.pointer(segments), key, auth.type, lib.text_list(allowed)],
	)
}

shown_value(value) := sprintf("'%v'", [value]) if value != null

shown_value(null) := "unset"

# As whom: a password login names the flow's MirrorMaker 2 user (its own
# principal on both clusters, with the ACLs mm2gov grants it), never a
# principal of the tenant or anyone else.
# Without any declared flow the object is refused already (admission_mm2_
# flow_undeclared, _cluster_unknown or _object_malformed): its users and
# Secrets are then not reported one by one as well.
some_flow_declared if count(declared_flows) > 0

violations contains lib.violation("admission_mm2_foreign_user", "high", msg, path) if {
	checked
	some_flow_declared
	some [auth, segments, flows] in authentications
	auth.type in password_types
	user := object.get(auth, "username", null)
	expected := {lib.mm2_user(flow) | some flow in flows}
	not user in expected
	path := lib.pointer(array.concat(segments, ["username"]))
	msg := sprintf(
		"%s: %s logs in as %s, which is not the MirrorMaker 2 user of the flow it serves (%s); log in as the flow's MirrorMaker 2 user",
		[lib.subject, lib.pointer(segments), shown_value(user), users_text(expected)],
	)
}

# Authentication fields that take a Secret reference ({secretName, ...}); a
# string there is the credential itself.
inline_credential_fields := ["password", "clientSecret", "accessToken", "refreshToken", "clientAssertion"]

violations contains lib.violation("admission_mm2_inline_credentials", "critical", msg, path) if {
	checked
	some [auth, segments, _] in authentications
	some key in inline_credential_fields
	value := auth[key]
	not is_object(value)
	path := lib.pointer(array.concat(segments, [key]))
	msg := sprintf(
		"%s: %s has an inline %s; credentials may only come by Secret reference: use passwordSecret: {secretName: <secret>, password: <key>}",
		[lib.subject, lib.pointer(segments), key],
	)
}

violations contains lib.violation("admission_mm2_inline_credentials", "critical", msg, path) if {
	checked
	some [auth, segments, _] in authentications
	auth.type in password_types
	not is_object(object.get(auth, "passwordSecret", null))
	path := lib.pointer(array.concat(segments, ["passwordSecret"]))
	msg := sprintf(
		"%s: %s uses type %s without a passwordSecret; give the password by Secret reference: passwordSecret: {secretName: <secret>, password: <key>}",
		[lib.subject, lib.pointer(segments), auth.type],
	)
}

# ---- Secrets -------------------------------------------------------------------

# Every Secret the spec references, wherever (authentication, trusted
# certificates, pod template volumes, env, external configuration): found by
# mm2gov's webhook (input.secret_refs: [pointer, name, how]).
secret_refs := [ref |
	some ref in input.secret_refs
	is_array(ref)
	count(ref) == 3
]

# The Secrets this MirrorMaker 2 may use: its flows' own credentials (the names
# mm2gov derived: flow.mm2_secrets) and the clusters' CA certificates.
own_secrets := {secret | some flow in declared_flows; some secret in flow.mm2_secrets} | lib.ca_secret_names

violations contains lib.violation("admission_mm2_admin_credentials", "critical", msg, path) if {
	checked
	some [path, secret, _] in secret_refs
	secret in lib.admin_secret_names
	some [admin, alias] in lib.admin_secrets
	admin == secret
	msg := sprintf(
		"%s: %s names secret %s, which holds cluster %s's admin credentials or CA key and would bypass every ACL; use the flow's MirrorMaker 2 credentials",
		[lib.subject, path, secret, alias],
	)
}

# Credentials for logging in are the flow's own; a CA certificate is no password.
flow_secrets := {secret | some flow in declared_flows; some secret in flow.mm2_secrets}

usable(path) := flow_secrets if {
	contains(path, "/authentication/")
} else := own_secrets

violations contains lib.violation("admission_mm2_foreign_secret", "critical", msg, path) if {
	checked
	some_flow_declared
	some [path, secret, how] in secret_refs
	how != "pattern"
	not secret in usable(path)
	not secret in lib.admin_secret_names
	msg := sprintf(
		"%s: %s names secret '%v', which is not one of the flow's MirrorMaker 2 Secrets it may use there (%s); a MirrorMaker 2 may only log in with, mount or reference its own flow's Secrets (and trust the clusters' CAs)",
		[lib.subject, path, secret, users_text(usable(path))],
	)
}

violations contains lib.violation("admission_mm2_foreign_secret", "critical", msg, path) if {
	checked
	some [path, pattern, "pattern"] in secret_refs
	msg := sprintf(
		"%s: %s trusts every Secret matching '%v', which can be any Secret of the namespace; name the cluster's CA Secret (secretName) instead",
		[lib.subject, path, pattern],
	)
}

# ---- config maps -----------------------------------------------------------------

# [config map, its path segments, role] of every `config` Strimzi hands to Kafka
# clients, the Connect worker or a connector. Listed, not found by walk():
# walking the whole spec on every review cost most of the decision's time.
config_maps contains [config, ["spec", "target", "config"], "worker"] if {
	config := lib.spec.target.config
	is_object(config)
}

config_maps contains [config, ["spec", "mirrors", i, "source", "config"], "client"] if {
	some i, mirror in lib.spec.mirrors
	config := mirror.source.config
	is_object(config)
}

config_maps contains [config, ["spec", "mirrors", i, part, "config"], "connector"] if {
	some i, mirror in lib.spec.mirrors
	some part in ["sourceConnector", "checkpointConnector", "heartbeatConnector"]
	config := mirror[part].config
	is_object(config)
}

config_maps contains [config, ["spec", "clusters", i, "config"], "worker"] if {
	some i, cluster in lib.spec.clusters
	config := cluster.config
	is_object(config)
}

# The keys each kind of config map may set: an allow-list, because the keys
# that change where or as whom a client connects are many and open-ended
# (bootstrap.servers, security.protocol, sasl.*, ssl.*, client overrides such
# as source.consumer.*, producer.override.*, config providers, filter and
# policy classes, ...). Timeouts, replication factors and MM2's own switches
# change neither.
client_keys := {
	"request.timeout.ms", "default.api.timeout.ms", "retry.backoff.ms", "retry.backoff.max.ms",
	"reconnect.backoff.ms", "reconnect.backoff.max.ms", "metadata.max.age.ms", "connections.max.idle.ms",
	"socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms",
}

allowed_keys := {
	"client": client_keys,
	"worker": (client_keys | {
		"config.storage.replication.factor", "offset.storage.replication.factor", "status.storage.replication.factor",
		"offset.storage.partitions", "status.storage.partitions", "offset.flush.interval.ms", "offset.flush.timeout.ms",
		"task.shutdown.graceful.timeout.ms", "scheduled.rebalance.max.delay.ms", "exactly.once.source.support",
		"connector.client.config.override.policy",
	}),
	"connector": {
		"replication.policy.class", "replication.policy.separator", "replication.factor",
		"offset-syncs.topic.replication.factor", "checkpoints.topic.replication.factor",
		"heartbeats.topic.replication.factor", "sync.topic.acls.enabled", "sync.topic.configs.enabled",
		"sync.topic.configs.interval.seconds", "refresh.topics.enabled", "refresh.topics.interval.seconds",
		"refresh.groups.enabled", "refresh.groups.interval.seconds", "emit.offset-syncs.enabled",
		"offset-syncs.topic.location", "offset.lag.max", "emit.checkpoints.enabled",
		"emit.checkpoints.interval.seconds", "sync.group.offsets.enabled", "sync.group.offsets.interval.seconds",
		"emit.heartbeats.enabled", "emit.heartbeats.interval.seconds", "heartbeats.replication.enabled",
		"consumer.poll.timeout.ms", "admin.timeout.ms", "exactly.once.support", "tasks.max", isolation_key,
		"add.source.alias.to.metrics", "use.incremental.alter.configs",
		"mm2gov.flow.id", "mm2gov.flow.offset-syncs.topic", "mm2gov.flow.checkpoints.topic",
		"mm2gov.flow.heartbeats.topic",
	},
}

# Reported by admission_mm2_filter_override instead.
reported_elsewhere(key, "connector") if controlled_key(key)

violations contains lib.violation("admission_mm2_config_key", "high", msg, path) if {
	checked
	some [config, segments, role] in config_maps
	some key, _ in config
	not key in allowed_keys[role]
	not reported_elsewhere(key, role)
	path := lib.pointer(array.concat(segments, [key]))
	msg := sprintf(
		"%s: %s sets %s, which mm2gov does not allow in a %s config: keys outside its allow-list can change where or as whom MirrorMaker 2 connects (bootstrap.servers, security.*, sasl.*, ssl.*, client overrides, config providers, classes); remove it (the spec's clusters, authentication and tls set those)",
		[lib.subject, lib.pointer(segments), key, role],
	)
}

# Allowed keys take plain values: no config provider reference (which reads a
# file, an environment variable or a Secret at run time), no nested value, and
# no client override other than "None".
violations contains lib.violation("admission_mm2_config_value", "high", msg, path) if {
	checked
	some [config, segments, role] in config_maps
	some key, value in config
	key in allowed_keys[role]
	problem := value_problem(key, value)
	path := lib.pointer(array.concat(segments, [key]))
	msg := sprintf("%s: %s key %s %s", [lib.subject, lib.pointer(segments), key, problem])
}

value_problem(key, value) := "has a list or object value; give it a plain string, number or boolean" if {
	not is_string(value)
	not is_number(value)
	not is_boolean(value)
} else := "is a config provider reference (${...}), which reads files, environment or Secrets at run time; give the value itself" if {
	contains(sprintf("%v", [value]), "${")
} else := "is not a boolean; set it to true or false" if {
	endswith(key, ".enabled")
	not lower(trim_space(sprintf("%v", [value]))) in {"true", "false"}
} else := "is neither read_committed nor read_uncommitted" if {
	key == isolation_key
	not lower(trim_space(sprintf("%v", [value]))) in {"read_committed", "read_uncommitted"}
} else := "is not None: with another policy, connectors may override their clients' connection settings; set it to None or remove it" if {
	key == "connector.client.config.override.policy"
	not value in override_none
}

override_none := {"None", "org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy"}

# Config keys that carry credentials. config.providers.* only names providers.
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
# JAAS line whose secret options are all references. (The key is refused by
# admission_mm2_config_key anyway; a literal is reported as critical.)
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

violations contains lib.violation("admission_mm2_inline_credentials", "critical", msg, path) if {
	checked
	some [config, segments, _] in config_maps
	some key, value in config
	sensitive_key(key)
	not credential_ok(key, value)
	path := lib.pointer(array.concat(segments, [key]))
	msg := sprintf(
		"%s: %s sets %s to a literal value (not shown); credentials never belong in config: use the authentication's passwordSecret",
		[lib.subject, lib.pointer(segments), key],
	)
}

# ---- pod overrides --------------------------------------------------------------

pod := p if {
	p := lib.spec.template.pod
	is_object(p)
} else := {}

# hostAliases and DNS servers decide what a bootstrap host name resolves to:
# the servers clusters.yaml names could be someone else's.
violations contains lib.violation("admission_mm2_pod_override", "high", msg, "spec/template/pod/hostAliases") if {
	checked
	aliases := pod.hostAliases
	aliases != []
	msg := sprintf("%s: spec.template.pod.hostAliases maps host names to other addresses, so the bootstrap servers may resolve elsewhere; remove it", [lib.subject])
}

violations contains lib.violation("admission_mm2_pod_override", "high", msg, path) if {
	checked
	some field in ["nameservers", "searches"]
	value := pod.dnsConfig[field]
	value != []
	path := lib.pointer(["spec", "template", "pod", "dnsConfig", field])
	msg := sprintf("%s: spec.template.pod.dnsConfig.%s changes how host names resolve, so the bootstrap servers may resolve elsewhere; remove it", [lib.subject, field])
}

violations contains lib.violation("admission_mm2_pod_override", "high", msg, "spec/template/pod/dnsPolicy") if {
	checked
	pod.dnsPolicy == "None"
	msg := sprintf("%s: spec.template.pod.dnsPolicy None takes name resolution from the spec, so the bootstrap servers may resolve elsewhere; use the cluster's DNS", [lib.subject])
}

# [env list, its path segments] of every container the spec may add variables to.
env_lists contains [env, ["spec", "template", container, "env"]] if {
	some container, settings in lib.spec.template
	env := settings.env
	is_array(env)
}

env_lists contains [env, ["spec", "externalConfiguration", "env"]] if {
	env := lib.spec.externalConfiguration.env
	is_array(env)
}

# Variables the JVM, Kafka's scripts or Strimzi's read to configure the process:
# JAVA_TOOL_OPTIONS alone can point the JAAS login at another file.
reserved_env(name) if regex.match(`^(KAFKA_|STRIMZI_|JAVA_|JDK_|_JAVA|LD_|OTEL_|CLASSPATH$)`, upper(name))

violations contains lib.violation("admission_mm2_pod_override", "high", msg, path) if {
	checked
	some [env, segments] in env_lists
	some i, variable in env
	name := lib.as_string(field_of(variable, "name"))
	reserved_env(name)
	path := lib.pointer(array.concat(segments, [i, "name"]))
	msg := sprintf(
		"%s: environment variable %s configures the JVM, Kafka or Strimzi (JAVA_*, JDK_*, KAFKA_*, STRIMZI_*, LD_*, OTEL_*, CLASSPATH) and can change where or as whom MirrorMaker 2 connects; remove it",
		[lib.subject, name],
	)
}

# Java system properties that are plainly about the network stack and nothing
# else; others (java.security.*, javax.net.ssl.*, JAAS, Kafka's own) change TLS,
# logins or connections.
allowed_system_properties := {"java.net.preferIPv4Stack", "java.net.preferIPv6Addresses", "networkaddress.cache.ttl", "networkaddress.cache.negative.ttl", "user.timezone", "file.encoding"}

violations contains lib.violation("admission_mm2_pod_override", "high", msg, path) if {
	checked
	some i, property in lib.spec.jvmOptions.javaSystemProperties
	name := field_of(property, "name")
	not name in allowed_system_properties
	path := lib.pointer(["spec", "jvmOptions", "javaSystemProperties", i, "name"])
	msg := sprintf(
		"%s: Java system property %v may change TLS, logins or connections; mm2gov allows only %s",
		[lib.subject, shown_value(name), lib.text_list(allowed_system_properties)],
	)
}

# A field of what should be an object; null when it is not one or lacks it.
field_of(value, key) := value[key] if is_object(value)

else := null
