# The connector and worker settings that keep a flow's MirrorMaker 2 to itself,
# held to mm2gov's settings table (no ACL sync, offset syncs on the target, the
# delivery the flow declares, ...), to the flow's own replication policy and MM2
# topics, and no setting that would bypass the spec's patterns or clusters.
#
# Package mm2gov.admission.rules.mirrormaker, split by concern over mirrormaker*.rego;
# the object's parts every file reads (mirrors, their ends and declared flows, the
# Connect spec, connections, config maps) are in mirrormaker.rego.
package mm2gov.admission.rules.mirrormaker

import data.mm2gov.admission.lib

# ---- settings held to the table --------------------------------------------

violations contains lib.violation("admission_mm2_settings_missing", "high", msg, "spec") if {
	checked
	count(settings) == 0
	msg := sprintf(
		"%s: OPA holds no well-formed MirrorMaker 2 settings table (data.mm2gov_repo.mm2_settings, which mm2gov's webhook pushes with the repo), so its connector settings cannot be checked; it is refused until the webhook pushes the repo again",
		[lib.subject],
	)
}

connector_config(mirror, connector) := config if {
	config := mirror[connector].config
	is_object(config)
} else := {}

config_path(i, connector, key) := lib.pointer(["spec", "mirrors", i, connector, "config", key])

connectors := ["sourceConnector", "checkpointConnector", "heartbeatConnector"]

# Strimzi runs a source connector even when the spec leaves it out.
connector_present(_, "sourceConnector")

connector_present(mirror, connector) if connector in object.keys(mirror)

# [config, its path segments, the flows it serves, how messages name it] of the
# config maps of a name where an entry must hold: each mirror's connector of
# that name that runs, and the Connect cluster's worker config.
required_places(name) := [[connector_config(mirror, name), ["spec", "mirrors", i, name, "config"], declared[i], sprintf("mirror %d %s", [i, name])] |
	some [i, mirror] in mirrors
	connector_present(mirror, name)
] if name in connectors

required_places("worker") := [[worker_config(connect), segments, declared_flows, lib.pointer(segments)]] if {
	[connect, base] := connect_spec
	segments := array.concat(base, ["config"])
}

worker_config(connect) := config if {
	config := connect.config
	is_object(config)
} else := {}

# ... and where a value that is set is compared: every mirror's connector of
# that name, and every worker config (v1beta2: each spec.clusters entry's).
set_places(name) := [[connector_config(mirror, name), ["spec", "mirrors", i, name, "config"], declared[i], sprintf("mirror %d %s", [i, name])] |
	some [i, mirror] in mirrors
] if name in connectors

set_places("worker") := [[config, segments, declared_flows, lib.pointer(segments)] |
	some [config, segments, "worker"] in config_maps
]

# [entry, config name, how it holds there] of every check the table asks for.
checks := [[entry, name, held] |
	some entry in settings
	some name, held in entry.held
]

# An exactly-once entry holds where a flow the config serves is exactly_once.
applies(entry, _) if not entry.exactly_once

applies(entry, flows) if {
	entry.exactly_once
	some flow in flows
	lib.exactly_once(flow)
}

# Not while the switch that turns the entry's feature off is false there.
switched_off(config, held) if {
	is_string(held.unless_false)
	lib.is_false(object.get(config, held.unless_false, null))
}

# A value as Kafka reads switches and enums (case and surrounding blanks
# ignored), or exactly when the entry says so.
matches(value, expected, entry) if {
	entry.exact
	value == expected
}

matches(value, expected, entry) if {
	not entry.exact
	setting_text(value) == setting_text(expected)
}

setting_text(value) := lower(trim_space(value)) if {
	is_string(value)
} else := sprintf("%v", [value]) if {
	is_boolean(value)
} else := sprintf("%v", [value]) if {
	is_number(value)
}

violations contains lib.violation(entry.rule, "high", msg, path) if {
	checked
	some [entry, name, held] in checks
	held.required
	some [config, segments, flows, place] in required_places(name)
	applies(entry, flows)
	not switched_off(config, held)
	value := object.get(config, entry.key, null)
	not matches(value, entry.value, entry)
	path := lib.pointer(array.concat(segments, [entry.key]))
	msg := breach(entry, held, place, value, flows)
}

violations contains lib.violation(entry.rule, "high", msg, path) if {
	checked
	some [entry, name, held] in checks
	not held.required
	some [config, segments, flows, place] in set_places(name)
	entry.key in object.keys(config)
	applies(entry, flows)
	not switched_off(config, held)
	not matches(config[entry.key], entry.value, entry)
	path := lib.pointer(array.concat(segments, [entry.key]))
	msg := breach(entry, held, place, config[entry.key], flows)
}

breach(entry, held, place, value, flows) := sprintf(
	"%s: %s has %s %s, but mm2gov holds it to '%v'%s: %s; set %s: '%v'%s",
	[lib.subject, place, entry.key, shown_value(value), entry.value, for_flows(entry, flows), entry.why, entry.key, entry.value, otherwise(held)],
)

for_flows(entry, flows) := sprintf(" for tenant %s's flow %s (delivery exactly_once)", [lib.tenant_name, lib.text_list(ids)]) if {
	entry.exactly_once
	ids := {lib.flow_id(flow) | some flow in flows; lib.exactly_once(flow)}
} else := ""

otherwise(held) := sprintf(", or %s: 'false'", [held.unless_false]) if {
	is_string(held.unless_false)
} else := " or remove it" if {
	not held.required
} else := ""

# An exactly-once entry on a config that serves an at_least_once flow: that
# flow's MirrorMaker 2 may only leave it unset or set its `off` value (KIP-618's
# transactions need transactional ids, which mm2gov grants exactly_once flows only).
violations contains lib.violation(entry.rule, "high", msg, path) if {
	checked
	some entry in settings
	entry.exactly_once
	is_string(entry.off)
	some name, _ in entry.held
	some [config, segments, flows, place] in set_places(name)
	at_least_once := {lib.flow_id(flow) | some flow in flows; not lib.exactly_once(flow)}
	count(at_least_once) > 0
	entry.key in object.keys(config)
	not matches(config[entry.key], entry.off, entry)
	path := lib.pointer(array.concat(segments, [entry.key]))
	msg := sprintf(
		"%s: %s has %s %s, but tenant %s's flow %s has delivery at_least_once, where mm2gov holds it to '%v' or unset: %s; remove it, or set delivery: exactly_once on the flow in tenants/%s.yaml",
		[lib.subject, place, entry.key, shown_value(config[entry.key]), lib.tenant_name, lib.text_list(at_least_once), entry.off, entry.why, lib.tenant_name],
	)
}

# ---- the flow's own settings --------------------------------------------------

# The settings whose values are the flow's own (flow_settings in mm2_settings.py)
# are held to the flow's data in the repo, which mm2gov derives (governance/policy/
# input.py: replication_policy_class, mm2_policy_config), not to the table.

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

# ---- filters ------------------------------------------------------------------

# What controlled_key (mirrormaker.rego) names is refused wherever a connector sets it.
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
