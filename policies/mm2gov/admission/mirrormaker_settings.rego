# The connector settings that keep a flow's MirrorMaker 2 to itself: no ACL sync,
# offset syncs on the target, the flow's own replication policy and MM2 topics,
# and the delivery the flow declares; settings that would bypass the spec's
# patterns or clusters are refused.
#
# Package mm2gov.admission.rules.mirrormaker, split by concern over mirrormaker*.rego;
# the object's parts every file reads (mirrors, their ends and declared flows, the
# Connect spec, connections, config maps) are in mirrormaker.rego.
package mm2gov.admission.rules.mirrormaker

import data.mm2gov.admission.lib

# ---- connector settings ------------------------------------------------------

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

# ---- delivery ----------------------------------------------------------------

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
