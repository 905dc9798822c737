# Tests of mirrormaker_settings.rego; the fixtures (mirror, req, ...) are mirrormaker_test.rego's.
package mm2gov.admission.rules.mirrormaker_test

import data.mm2gov.admission.lib_test as t
import data.mm2gov.lib.input_test as fx

# ---- connector settings ------------------------------------------------------

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
	contains(t.message(d, "admission_mm2_sync_topic_acls"), "unset (MM2's default is true)")
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
	contains(t.message(d, "admission_mm2_offset_syncs_location"), "unset (MM2's default is source)")
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
	t.message(d, "admission_mm2_sync_topic_acls") == `KafkaMirrorMaker2 payments-onprem-to-cloud: mirror 0 checkpointConnector sets sync.topic.acls.enabled 'true'; mm2gov's ACLs are the only ones: set it to "false" or remove it`
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
	v.message == "KafkaMirrorMaker2 payments-onprem-to-cloud: Connect config exactly.once.source.support is 'disabled', but tenant payments's flow payments-onprem-to-cloud has delivery exactly_once; set exactly.once.source.support: enabled"
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
	t.message(d, "admission_mm2_delivery") == "KafkaMirrorMaker2 payments-onprem-to-cloud: spec/target/config sets exactly.once.source.support 'enabled', but tenant payments's flow payments-onprem-to-cloud has delivery at_least_once: its MirrorMaker 2 is granted no transactional id; remove the key, or set delivery: exactly_once on the flow in tenants/payments.yaml"
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
