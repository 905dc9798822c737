# Tests of mirrormaker_settings.rego; the fixtures (mirror, req, ...) are mirrormaker_test.rego's.
package mm2gov.admission.rules.mirrormaker_test

import data.mm2gov.admission.lib_test as t
import data.mm2gov.lib.input_test as fx

# ---- the settings table ------------------------------------------------------

# The decision on `req` with `settings` as the repo's settings table.
decide_with_settings(request, settings) := d if {
	d := data.mm2gov.admission.decision with input as request with data.mm2gov_repo as object.union(t.repo, {"mm2_settings": settings})
}

# An entry as mm2gov hands it to OPA (governance/model/mm2_settings.py, to_input).
entry(key, value, held) := {
	"key": key, "value": value, "why": "a test entry says so", "exactly_once": false, "written": [],
	"rule": "admission_mm2_test_setting", "exact": false, "off": null, "held": held,
}

required := {"required": true, "unless_false": null}

if_set := {"required": false, "unless_false": null}

# Security decisions fail closed: without the table, or with one that is not
# well formed, no KafkaMirrorMaker2 is admitted (its settings cannot be checked).
test_without_the_settings_table_every_mirror_maker_is_refused if {
	t.decide(with_mirror({})).allowed
	d := data.mm2gov.admission.decision with input as with_mirror({}) with data.mm2gov_repo as object.remove(t.repo, ["mm2_settings"])
	not d.allowed
	t.rules(d).admission_mm2_settings_missing
	contains(t.message(d, "admission_mm2_settings_missing"), "OPA holds no well-formed MirrorMaker 2 settings table")
	every broken in [
		[],
		"sync.topic.acls.enabled=false",
		{"sync.topic.acls.enabled": "false"},
		array.concat(t.mm2_settings, [object.remove(entry("x", "y", {"sourceConnector": required}), ["why"])]),
		array.concat(t.mm2_settings, [entry("x", "y", {"sourceConnector": true})]),
		array.concat(t.mm2_settings, [entry("x", "y", {"elsewhere": required})]),
		array.concat(t.mm2_settings, [entry("x", ["y"], {"sourceConnector": required})]),
		array.concat(t.mm2_settings, [object.union(entry("x", "y", {"sourceConnector": required}), {"rule": ""})]),
	] {
		refused := decide_with_settings(with_mirror({}), broken)
		not refused.allowed
		t.rules(refused).admission_mm2_settings_missing
	}
}

# A KafkaUser reads no MirrorMaker 2 setting: the table's absence is not its concern.
test_without_the_settings_table_other_kinds_are_judged_as_before if {
	user := t.request("KafkaUser", "payments-app", "payments", {"metadata": {"name": "payments-app", "labels": {"strimzi.io/cluster": "cloud"}}, "spec": {"authorization": {"type": "simple", "acls": []}}})
	t.decide(user).allowed
	d := data.mm2gov.admission.decision with input as user with data.mm2gov_repo as object.remove(t.repo, ["mm2_settings"])
	d.allowed
}

# The values are the table's, none of the rules': an entry added to the table is
# required with its value, refused with its why, and allow-listed where it is held;
# another value in the table for an existing entry refuses the object as generated.
test_the_table_decides_the_settings if {
	settings := array.concat(t.mm2_settings, [entry("mm2gov.test.setting", "on", {"sourceConnector": required, "checkpointConnector": if_set})])
	d := decide_with_settings(with_mirror({}), settings)
	t.rules(d) == {"admission_mm2_test_setting"}
	t.hits(d, "admission_mm2_test_setting") == {"spec/mirrors/0/sourceConnector/config/mm2gov.test.setting"}
	t.message(d, "admission_mm2_test_setting") == "KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 sourceConnector has mm2gov.test.setting unset, but mm2gov holds it to 'on': a test entry says so; set mm2gov.test.setting: 'on'"
	decide_with_settings(with_mirror(connector({"mm2gov.test.setting": " ON"})), settings).allowed
	other := decide_with_settings(with_mirror({"checkpointConnector": {"config": {"mm2gov.test.setting": "off"}}}), settings)
	t.hits(other, "admission_mm2_test_setting") == {"spec/mirrors/0/sourceConnector/config/mm2gov.test.setting", "spec/mirrors/0/checkpointConnector/config/mm2gov.test.setting"}
	contains(t.message(decide_with_settings(with_mirror(connector({"mm2gov.test.setting": "off"})), settings), "admission_mm2_test_setting"), "has mm2gov.test.setting 'off', but mm2gov holds it to 'on': a test entry says so")

	# Without the entry the key is on no allow-list.
	t.rules(t.decide(with_mirror(connector({"mm2gov.test.setting": "on"})))) == {"admission_mm2_config_key"}

	# The generated object sets offset-syncs.topic.location: target; a table that says `source` refuses it.
	moved := [object.union(e, {"value": "source"}) | some e in t.mm2_settings; e.key == "offset-syncs.topic.location"]
	kept := [e | some e in t.mm2_settings; e.key != "offset-syncs.topic.location"]
	t.hits(decide_with_settings(with_mirror({}), array.concat(kept, moved)), "admission_mm2_offset_syncs_location") == {
		"spec/mirrors/0/sourceConnector/config/offset-syncs.topic.location",
		"spec/mirrors/0/checkpointConnector/config/offset-syncs.topic.location",
	}
}

# An exact entry compares the value as written; others as Kafka reads switches and enums.
test_exact_entries_compare_exactly if {
	settings := array.concat(t.mm2_settings, [object.union(entry("mm2gov.test.setting", "On", {"sourceConnector": if_set}), {"exact": true})])
	decide_with_settings(with_mirror(connector({"mm2gov.test.setting": "On"})), settings).allowed
	t.rules(decide_with_settings(with_mirror(connector({"mm2gov.test.setting": "on"})), settings)) == {"admission_mm2_test_setting"}
	t.rules(t.decide(with_mirror(connector({"replication.policy.separator": " ."})))) == {"admission_mm2_replication_policy"}
}

# The keys a config may set: the rules' own list and the table's, as before the table moved out of Rego.
test_allow_lists_are_the_tables_keys_and_the_rules_own if {
	allowed := data.mm2gov.admission.rules.mirrormaker.allowed_keys with data.mm2gov_repo as t.repo
	allowed.worker - allowed.client == {
		"config.storage.replication.factor", "offset.storage.replication.factor", "status.storage.replication.factor",
		"offset.storage.partitions", "status.storage.partitions", "offset.flush.interval.ms", "offset.flush.timeout.ms",
		"task.shutdown.graceful.timeout.ms", "scheduled.rebalance.max.delay.ms", "exactly.once.source.support",
		"connector.client.config.override.policy",
	}
	allowed.connector == {
		"replication.policy.class", "replication.policy.separator", "replication.factor",
		"offset-syncs.topic.replication.factor", "checkpoints.topic.replication.factor",
		"heartbeats.topic.replication.factor", "sync.topic.acls.enabled", "sync.topic.configs.enabled",
		"sync.topic.configs.interval.seconds", "refresh.topics.enabled", "refresh.topics.interval.seconds",
		"refresh.groups.enabled", "refresh.groups.interval.seconds", "emit.offset-syncs.enabled",
		"offset-syncs.topic.location", "offset.lag.max", "emit.checkpoints.enabled",
		"emit.checkpoints.interval.seconds", "sync.group.offsets.enabled", "sync.group.offsets.interval.seconds",
		"emit.heartbeats.enabled", "emit.heartbeats.interval.seconds", "heartbeats.replication.enabled",
		"consumer.poll.timeout.ms", "admin.timeout.ms", "exactly.once.support", "tasks.max",
		"source.consumer.isolation.level", "add.source.alias.to.metrics", "use.incremental.alter.configs",
		"mm2gov.flow.id", "mm2gov.flow.offset-syncs.topic", "mm2gov.flow.checkpoints.topic",
		"mm2gov.flow.heartbeats.topic",
	}
	without := data.mm2gov.admission.rules.mirrormaker.allowed_keys with data.mm2gov_repo as object.remove(t.repo, ["mm2_settings"])
	allowed.connector - without.connector == {e.key | some e in t.mm2_settings; some name in e.written; name != "worker"} | {e.key | some e in t.mm2_settings; some name, _ in e.held; name != "worker"}
}

# ---- connector settings ------------------------------------------------------

# The why of the test table's entry for `key` (settings_fixture_test.rego).
why(key) := [entry.why | some entry in t.mm2_settings; entry.key == key][0]

test_sync_topic_acls_off_pass if {
	t.decide(with_mirror(connector({"sync.topic.acls.enabled": false}))).allowed
	t.decide(with_mirror(connector({"sync.topic.acls.enabled": "FALSE"}))).allowed
}

test_sync_topic_acls_on_fires if {
	d := t.decide(with_mirror(connector({"sync.topic.acls.enabled": "true"})))
	t.rules(d) == {"admission_mm2_sync_topic_acls"}
	t.hits(d, "admission_mm2_sync_topic_acls") == {"spec/mirrors/0/sourceConnector/config/sync.topic.acls.enabled"}
	contains(t.message(d, "admission_mm2_sync_topic_acls"), "has sync.topic.acls.enabled 'true'")
}

test_sync_topic_acls_unset_fires if {
	config := object.remove(mirror.sourceConnector.config, ["sync.topic.acls.enabled"])
	d := t.decide(spec_req(object.union(good_spec, {"mirrors": [object.union(object.remove(mirror, ["sourceConnector"]), {"sourceConnector": {"config": config}})]})))
	t.rules(d) == {"admission_mm2_sync_topic_acls"}
	contains(t.message(d, "admission_mm2_sync_topic_acls"), "sourceConnector has sync.topic.acls.enabled unset, but mm2gov holds it to 'false'")
	contains(t.message(d, "admission_mm2_sync_topic_acls"), why("sync.topic.acls.enabled"))
}

test_no_source_connector_fires if {
	d := t.decide(req({"mirrors": [object.remove(mirror, ["sourceConnector"])]}, {}, {}))
	t.rules(d) == {"admission_mm2_sync_topic_acls", "admission_mm2_offset_syncs_location"}
}

test_offset_syncs_on_target_pass if {
	t.decide(with_mirror(connector({"emit.offset-syncs.enabled": "true", "offset-syncs.topic.location": "target"}))).allowed
}

test_offset_syncs_on_source_fires if {
	config := object.remove(mirror.sourceConnector.config, ["offset-syncs.topic.location"])
	d := t.decide(req({"mirrors": [object.union(object.remove(mirror, ["sourceConnector"]), {"sourceConnector": {"config": config}})]}, {}, {}))
	t.rules(d) == {"admission_mm2_offset_syncs_location"}
	t.hits(d, "admission_mm2_offset_syncs_location") == {"spec/mirrors/0/sourceConnector/config/offset-syncs.topic.location"}
	contains(t.message(d, "admission_mm2_offset_syncs_location"), "offset-syncs.topic.location unset, but mm2gov holds it to 'target'")
	d2 := t.decide(with_mirror(connector({"emit.offset-syncs.enabled": true, "offset-syncs.topic.location": "source"})))
	contains(t.message(d2, "admission_mm2_offset_syncs_location"), "offset-syncs.topic.location 'source'")
}

test_replication_policy_mismatch_fires if {
	d := t.decide(with_mirror(connector({"replication.policy.class": "io.mm2gov.replication.FlowIdentityReplicationPolicy"})))
	t.rules(d) == {"admission_mm2_replication_policy"}
	t.message(d, "admission_mm2_replication_policy") == "KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 sourceConnector uses replication.policy.class 'io.mm2gov.replication.FlowIdentityReplicationPolicy', but tenant payments's flow onprem -> cloud uses the default policy with its own MirrorMaker 2 topics; set replication.policy.class: io.mm2gov.replication.FlowReplicationPolicy"
}

# Kafka's own classes name offset syncs and checkpoints per cluster alias: refused, even the flow's kind.
test_kafka_replication_policy_fires if {
	d := t.decide(with_mirror({"checkpointConnector": {"config": {"replication.policy.class": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"}}}))
	t.rules(d) == {"admission_mm2_replication_policy"}
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/checkpointConnector/config/replication.policy.class"}
}

test_default_replication_policy_when_unset if {
	config := object.remove(mirror.sourceConnector.config, ["replication.policy.class"])
	unset := spec_req(object.union(good_spec, {"mirrors": [object.union(object.remove(mirror, ["sourceConnector"]), {"sourceConnector": {"config": config}})]}))
	d := t.decide(unset)
	t.rules(d) == {"admission_mm2_replication_policy"}
	contains(t.message(d, "admission_mm2_replication_policy"), "uses replication.policy.class 'org.apache.kafka.connect.mirror.DefaultReplicationPolicy'")
}

test_identity_flow_needs_flow_identity_policy if {
	identity_flow := object.union(fx.payments.flows[0], {"replication_policy": "identity", "replication_policy_class": "io.mm2gov.replication.FlowIdentityReplicationPolicy"})
	identity := fx.repo([object.union(fx.payments, {"flows": [identity_flow]})])
	d := t.decide_in(with_mirror({}), identity)
	t.rules(d) == {"admission_mm2_replication_policy"}
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/sourceConnector/config/replication.policy.class", "spec/mirrors/0/checkpointConnector/config/replication.policy.class"}
	policy := {"replication.policy.class": "io.mm2gov.replication.FlowIdentityReplicationPolicy"}
	t.decide_in(with_mirror({"sourceConnector": {"config": policy}, "checkpointConnector": {"config": policy}}), identity).allowed
}

test_checkpoint_connector_policy_checked if {
	checkpoints := {"checkpointConnector": {"config": {"replication.policy.class": "com.example.Custom"}}}
	d := t.decide(with_mirror(checkpoints))
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/checkpointConnector/config/replication.policy.class"}
}

test_replication_separator_fires if {
	t.decide(with_mirror(connector({"replication.policy.separator": "."}))).allowed
	d := t.decide(with_mirror(connector({"replication.policy.separator": "_"})))
	t.rules(d) == {"admission_mm2_replication_policy"}
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/sourceConnector/config/replication.policy.separator"}
}

test_filter_overrides_fire if {
	d := t.decide(with_mirror(connector({"topics": ".*", "topic.filter.class": "com.example.All", "source.cluster.alias": "cloud"})))
	t.rules(d) == {"admission_mm2_filter_override"}
	t.hits(d, "admission_mm2_filter_override") == {
		"spec/mirrors/0/sourceConnector/config/topics",
		"spec/mirrors/0/sourceConnector/config/topic.filter.class",
		"spec/mirrors/0/sourceConnector/config/source.cluster.alias",
	}
	d2 := t.decide(with_mirror({"checkpointConnector": {"config": {"groups": ".*", "target.cluster.bootstrap.servers": "x:9092"}}}))
	t.hits(d2, "admission_mm2_filter_override") == {
		"spec/mirrors/0/checkpointConnector/config/groups",
		"spec/mirrors/0/checkpointConnector/config/target.cluster.bootstrap.servers",
	}
	some v in d2.violations
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 checkpointConnector config sets groups, which overrides what the spec says MirrorMaker 2 mirrors and between which clusters; remove it and use topicsPattern, groupsPattern and the spec's clusters"
}

test_heartbeat_connector_policy_checked if {
	t.decide(with_mirror({"heartbeatConnector": {"config": {"emit.heartbeats.enabled": false}}})).allowed
	t.decide(with_mirror({"heartbeatConnector": {"config": flow_policy}})).allowed
	d := t.decide(with_mirror({"heartbeatConnector": {"config": {"replication.policy.class": "com.example.Custom"}}}))
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/heartbeatConnector/config/replication.policy.class"}
}

test_shared_internal_topics_fire if {
	# a heartbeat connector with Kafka's policy writes the shared `heartbeats`
	d := t.decide(with_mirror({"heartbeatConnector": {}}))
	t.rules(d) == {"admission_mm2_replication_policy", "admission_mm2_shared_internal_topics"}
	t.hits(d, "admission_mm2_replication_policy") == {"spec/mirrors/0/heartbeatConnector/config/replication.policy.class"}
	count(t.hits(d, "admission_mm2_shared_internal_topics")) == 4
}

# Tenant payments points its checkpoints at marketing's flow's topic, its offset syncs at MM2's shared name,
# and leaves its heartbeats topic unset: each refused, at the key.
test_foreign_flow_topics_fire if {
	foreign := {
		"mm2gov.flow.checkpoints.topic": "mm2gov.marketing-onprem-to-cloud.checkpoints",
		"mm2gov.flow.offset-syncs.topic": "mm2-offset-syncs.cloud.internal",
	}
	checkpoint := object.remove(object.union(mirror.checkpointConnector.config, foreign), ["mm2gov.flow.heartbeats.topic"])
	d := t.decide(req({"mirrors": [object.union(object.remove(mirror, ["checkpointConnector"]), {"checkpointConnector": {"config": checkpoint}})]}, {}, {}))
	t.rules(d) == {"admission_mm2_shared_internal_topics"}
	t.hits(d, "admission_mm2_shared_internal_topics") == {
		"spec/mirrors/0/checkpointConnector/config/mm2gov.flow.checkpoints.topic",
		"spec/mirrors/0/checkpointConnector/config/mm2gov.flow.offset-syncs.topic",
		"spec/mirrors/0/checkpointConnector/config/mm2gov.flow.heartbeats.topic",
	}
	some v in d.violations
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 checkpointConnector has mm2gov.flow.checkpoints.topic 'mm2gov.marketing-onprem-to-cloud.checkpoints', but tenant payments's flow onprem -> cloud names its own MirrorMaker 2 topics: another value writes or reads another flow's offset syncs, checkpoints or heartbeats, or topics every flow between these clusters shares; set mm2gov.flow.checkpoints.topic: mm2gov.payments-onprem-to-cloud.checkpoints"
	some u in d.violations
	contains(u.message, "mm2gov.flow.heartbeats.topic unset")
	d2 := t.decide(with_mirror(connector({"mm2gov.flow.id": "marketing-onprem-to-cloud"})))
	t.hits(d2, "admission_mm2_shared_internal_topics") == {"spec/mirrors/0/sourceConnector/config/mm2gov.flow.id"}
}

# The checkpoint connector reads offset syncs where the location says: on the target, as the source connector writes them.
test_checkpoint_offset_syncs_location_fires if {
	config := object.remove(mirror.checkpointConnector.config, ["offset-syncs.topic.location"])
	d := t.decide(req({"mirrors": [object.union(object.remove(mirror, ["checkpointConnector"]), {"checkpointConnector": {"config": config}})]}, {}, {}))
	t.rules(d) == {"admission_mm2_offset_syncs_location"}
	t.hits(d, "admission_mm2_offset_syncs_location") == {"spec/mirrors/0/checkpointConnector/config/offset-syncs.topic.location"}
	off := object.union(config, {"emit.checkpoints.enabled": "false"})
	t.decide(req({"mirrors": [object.union(object.remove(mirror, ["checkpointConnector"]), {"checkpointConnector": {"config": off}})]}, {}, {})).allowed
}

test_sync_topic_acls_on_other_connectors_fires if {
	d := t.decide(with_mirror({"checkpointConnector": {"config": {"sync.topic.acls.enabled": "true"}}}))
	t.rules(d) == {"admission_mm2_sync_topic_acls"}
	t.message(d, "admission_mm2_sync_topic_acls") == sprintf("KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 checkpointConnector has sync.topic.acls.enabled 'true', but mm2gov holds it to 'false': %s; set sync.topic.acls.enabled: 'false' or remove it", [why("sync.topic.acls.enabled")])
	t.decide(with_mirror({"checkpointConnector": {"config": {"sync.topic.acls.enabled": false}}})).allowed
}

# ---- delivery ----------------------------------------------------------------

# payments' flow as mm2gov generates it with delivery exactly_once (compile/strimzi.py).
eos_target := {"target": {"config": {"exactly.once.source.support": "enabled"}}}

eos_source := {"sourceConnector": {"config": {
	"exactly.once.support": "required",
	"source.consumer.isolation.level": "read_committed",
}}}

test_exactly_once_flow_as_generated_pass if {
	t.decide_in(req(eos_target, eos_source, {}), fx.exactly_once_base) == {"allowed": true, "violations": []}
}

test_exactly_once_flow_without_its_settings_fires if {
	d := t.decide_in(req({}, {}, {}), fx.exactly_once_base)
	t.rules(d) == {"admission_mm2_delivery"}
	t.hits(d, "admission_mm2_delivery") == {
		"spec/target/config/exactly.once.source.support",
		"spec/mirrors/0/sourceConnector/config/source.consumer.isolation.level",
	}
	some v in d.violations
	v.location == "spec/target/config/exactly.once.source.support"
	v.message == sprintf("KafkaMirrorMaker2 payments-onprem-to-cloud: spec/target/config has exactly.once.source.support unset, but mm2gov holds it to 'enabled' for tenant payments's flow payments-onprem-to-cloud (delivery exactly_once): %s; set exactly.once.source.support: 'enabled'", [why("exactly.once.source.support")])
}

test_exactly_once_flow_reading_uncommitted_fires if {
	uncommitted := {"sourceConnector": {"config": {"source.consumer.isolation.level": "read_uncommitted"}}}
	d := t.decide_in(req(eos_target, uncommitted, {}), fx.exactly_once_base)
	t.hits(d, "admission_mm2_delivery") == {"spec/mirrors/0/sourceConnector/config/source.consumer.isolation.level"}
	contains(t.message(d, "admission_mm2_delivery"), "records of aborted transactions would be copied")
	preparing := {"target": {"config": {"exactly.once.source.support": "preparing"}}}
	t.hits(t.decide_in(req(preparing, eos_source, {}), fx.exactly_once_base), "admission_mm2_delivery") == {"spec/target/config/exactly.once.source.support"}
}

# An at_least_once flow's MM2 has no transactional id: turning transactions on
# (or "preparing", whose leader is transactional) is refused, "disabled" is not.
test_at_least_once_flow_turning_exactly_once_on_fires if {
	d := t.decide(req(eos_target, {}, {}))
	t.rules(d) == {"admission_mm2_delivery"}
	t.hits(d, "admission_mm2_delivery") == {"spec/target/config/exactly.once.source.support"}
	t.message(d, "admission_mm2_delivery") == sprintf("KafkaMirrorMaker2 payments-onprem-to-cloud: spec/target/config has exactly.once.source.support 'enabled', but tenant payments's flow payments-onprem-to-cloud has delivery at_least_once, where mm2gov holds it to 'disabled' or unset: %s; remove it, or set delivery: exactly_once on the flow in tenants/payments.yaml", [why("exactly.once.source.support")])
	t.rules(t.decide(req({"target": {"config": {"exactly.once.source.support": "Preparing"}}}, {}, {}))) == {"admission_mm2_delivery"}
	t.rules(t.decide(req({"target": {"config": {"exactly.once.source.support": true}}}, {}, {}))) == {"admission_mm2_delivery"}
	t.decide(req({"target": {"config": {"exactly.once.source.support": "disabled"}}}, {}, {})).allowed
}

# Reading committed records only is harmless on any flow; other values are not Kafka's.
test_isolation_level_values if {
	t.decide(req({}, eos_source, {})).allowed
	d := t.decide(req({}, {"sourceConnector": {"config": {"source.consumer.isolation.level": "dirty"}}}, {}))
	t.rules(d) == {"admission_mm2_config_value"}
	contains(t.message(d, "admission_mm2_config_value"), "is neither read_committed nor read_uncommitted")
}
