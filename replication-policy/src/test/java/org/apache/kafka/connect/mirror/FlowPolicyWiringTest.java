package org.apache.kafka.connect.mirror;

import io.mm2gov.replication.FlowIdentityReplicationPolicy;
import io.mm2gov.replication.FlowReplicationPolicy;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which keys of a dedicated MirrorMaker 2's properties file reach the replication policy, asked of MM2's own
 * config classes the way MirrorHerder and the connectors build them: MirrorMakerConfig.connectorBaseConfig for
 * each connector of a herder, the connector configs, then the task configs the connectors hand out
 * (MirrorSourceTask's OffsetSyncWriter, MirrorCheckpointTask's OffsetSyncStore and CheckpointStore,
 * MirrorHeartbeatTask). In Kafka's package because those accessors are package-private.
 */
class FlowPolicyWiringTest {

    static final String FLOW = "payments-source-to-target";
    static final Map<String, String> FLOW_KEYS = Map.of(
            "mm2gov.flow.id", FLOW,
            "mm2gov.flow.offset-syncs.topic", "mm2gov." + FLOW + ".offset-syncs",
            "mm2gov.flow.checkpoints.topic", "mm2gov." + FLOW + ".checkpoints",
            "mm2gov.flow.heartbeats.topic", "mm2gov." + FLOW + ".heartbeats");
    static final SourceAndTarget PAIR = new SourceAndTarget("source", "target");

    /** A generated flow's file, reduced to what decides the connector configs (no security, no providers). */
    static Map<String, String> flowFile(String policyClass, String keyPrefix) {
        Map<String, String> props = new HashMap<>();
        // MirrorMakerConfig's Plugins (config providers only) would scan the whole class path per instance
        props.put("plugin.discovery", "service_load");
        props.put("clusters", "source,target");
        props.put("source.bootstrap.servers", "127.0.0.1:1");
        props.put("target.bootstrap.servers", "127.0.0.1:2");
        props.put("source->target.enabled", "true");
        props.put("target->source.enabled", "false");
        props.put("source->target.topics", "payments\\..*");
        props.put("source->target.groups", "payments-.*");
        props.put("replication.policy.class", policyClass);
        props.put("replication.policy.separator", ".");
        props.put("emit.checkpoints.enabled", "true");
        props.put("emit.offset-syncs.enabled", "true");
        props.put("offset-syncs.topic.location", "target");
        props.put("sync.group.offsets.enabled", "true");
        props.put("emit.heartbeats.enabled", "true");
        props.put("target->source.emit.heartbeats.enabled", "false");
        props.put("heartbeats.replication.enabled", "false");
        FLOW_KEYS.forEach((key, value) -> props.put(keyPrefix + key, value));
        return props;
    }

    static MirrorSourceConfig sourceConfig(MirrorMakerConfig mm) {
        return new MirrorSourceConfig(mm.connectorBaseConfig(PAIR, MirrorSourceConnector.class));
    }

    static MirrorCheckpointConfig checkpointConfig(MirrorMakerConfig mm) {
        return new MirrorCheckpointConfig(mm.connectorBaseConfig(PAIR, MirrorCheckpointConnector.class));
    }

    static MirrorHeartbeatConfig heartbeatConfig(MirrorMakerConfig mm) {
        return new MirrorHeartbeatConfig(mm.connectorBaseConfig(PAIR, MirrorHeartbeatConnector.class));
    }

    @ParameterizedTest
    @ValueSource(strings = {"io.mm2gov.replication.FlowReplicationPolicy", "io.mm2gov.replication.FlowIdentityReplicationPolicy"})
    void pairScopedKeysReachEveryConnectorAndTask(String policyClass) {
        MirrorMakerConfig mm = new MirrorMakerConfig(flowFile(policyClass, "source->target."));
        assertEquals(List.of(PAIR), mm.clusterPairs(), "one herder: the flow's");

        MirrorSourceConfig source = sourceConfig(mm);
        assertEquals(policyClass, source.replicationPolicy().getClass().getName());
        assertEquals("target", source.offsetSyncsTopicLocation());
        assertEquals("mm2gov." + FLOW + ".offset-syncs", source.offsetSyncsTopic());
        MirrorSourceTaskConfig sourceTask = new MirrorSourceTaskConfig(
                source.taskConfigForTopicPartitions(List.of(new TopicPartition("payments.orders", 0)), 0));
        assertEquals("mm2gov." + FLOW + ".offset-syncs", sourceTask.offsetSyncsTopic(), "OffsetSyncWriter's topic");

        MirrorCheckpointConfig checkpoint = checkpointConfig(mm);
        assertEquals("mm2gov." + FLOW + ".checkpoints", checkpoint.checkpointsTopic());
        MirrorCheckpointTaskConfig checkpointTask = new MirrorCheckpointTaskConfig(
                checkpoint.taskConfigForConsumerGroups(List.of("payments-readers"), 0));
        assertEquals("mm2gov." + FLOW + ".checkpoints", checkpointTask.checkpointsTopic(), "CheckpointStore's topic");
        assertEquals("mm2gov." + FLOW + ".offset-syncs", checkpointTask.offsetSyncsTopic(), "OffsetSyncStore's topic");

        MirrorHeartbeatConfig heartbeat = heartbeatConfig(mm);
        assertEquals("mm2gov." + FLOW + ".heartbeats", heartbeat.heartbeatsTopic());
        assertEquals("mm2gov." + FLOW + ".heartbeats",
                new MirrorHeartbeatConfig(heartbeat.originalsStrings()).heartbeatsTopic(), "MirrorHeartbeatTask's topic");

        // what the source connector replicates is unchanged: the flow's internal topics never, remote names Kafka's
        MirrorSourceConnector connector = new MirrorSourceConnector(PAIR, source.replicationPolicy(), source.topicFilter(),
                source.configPropertyFilter(), source.heartbeatsReplicationEnabled());
        assertTrue(connector.shouldReplicateTopic("payments.orders"));
        for (String internal : List.of("mm2gov." + FLOW + ".offset-syncs", "mm2gov." + FLOW + ".checkpoints")) {
            assertFalse(connector.shouldReplicateTopic(internal), internal);
        }
        boolean identity = source.replicationPolicy() instanceof FlowIdentityReplicationPolicy;
        assertEquals(identity ? "payments.orders" : "source.payments.orders", connector.formatRemoteTopic("payments.orders"));
    }

    @Test
    void topLevelKeysNeverReachTheConnectors() {
        // MirrorMakerConfig.connectorBaseConfig keeps only the connectors' own config names, config.providers*,
        // replication.policy* and the pair's `<source>-><target>.` keys: a top-level mm2gov.flow.* key is dropped,
        // so the policy fails closed in every connector of the herder
        MirrorMakerConfig mm = new MirrorMakerConfig(flowFile(FlowReplicationPolicy.class.getName(), ""));
        for (Class<?> connector : MirrorMaker.CONNECTOR_CLASSES) {
            Map<String, String> props = mm.connectorBaseConfig(PAIR, connector);
            assertFalse(props.containsKey("mm2gov.flow.id"), connector.getSimpleName());
        }
        for (Runnable build : List.<Runnable>of(() -> sourceConfig(mm), () -> checkpointConfig(mm), () -> heartbeatConfig(mm))) {
            ConfigException failure = assertThrows(ConfigException.class, build::run);
            assertTrue(failure.getMessage().contains("\"mm2gov.flow.id\""), failure.getMessage());
        }
    }

    @Test
    void aReverseHeartbeatsHerderGetsNoFlowKeysAndFailsClosed() {
        // emit.heartbeats.enabled=true at top level also creates the target->source herder (heartbeats into the source
        // cluster) unless `target->source.emit.heartbeats.enabled=false`: its connectors never see the pair's keys
        Map<String, String> file = flowFile(FlowReplicationPolicy.class.getName(), "source->target.");
        file.remove("target->source.emit.heartbeats.enabled");
        MirrorMakerConfig mm = new MirrorMakerConfig(file);
        SourceAndTarget reverse = new SourceAndTarget("target", "source");
        assertEquals(Set.of(PAIR, reverse), Set.copyOf(mm.clusterPairs()));
        Map<String, String> props = mm.connectorBaseConfig(reverse, MirrorHeartbeatConnector.class);
        ConfigException failure = assertThrows(ConfigException.class, () -> new MirrorHeartbeatConfig(props));
        assertTrue(failure.getMessage().contains("\"mm2gov.flow.id\""), failure.getMessage());
    }
}
