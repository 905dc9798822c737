package org.apache.kafka.connect.mirror;

import org.apache.kafka.common.config.ConfigDef;

import java.util.Map;

/**
 * The oracle's door into MirrorMaker 2's package-private decisions.
 *
 * <p>Why this class lives in Kafka's package: the answers must come from the very methods MM2 runs
 * ({@code MirrorSourceConnector.shouldReplicateTopic}, {@code MirrorCheckpointConfig.groupFilter},
 * the connector configs' client maps), and those are package-private. On the class path (no module
 * path) a second jar may add classes to the package; nothing here re-implements Kafka's logic.
 */
public final class OracleAccess {

    private OracleAccess() {
    }

    /** The definition DefaultTopicFilter parses {@code topics}/{@code topics.exclude} with (LIST + ValidList). */
    public static ConfigDef topicFilterConfigDef() {
        return DefaultTopicFilter.TopicFilterConfig.DEF;
    }

    /** {@code <source>-><target>.enabled} as the connector reads it (false unless set). */
    public static boolean enabled(MirrorConnectorConfig config) {
        return config.enabled();
    }

    /** The replication policy instance the connector configured (honours replication.policy.class). */
    public static ReplicationPolicy replicationPolicy(MirrorConnectorConfig config) {
        return config.replicationPolicy();
    }

    /** The source connector's topic filter (topic.filter.class, configured with the connector config). */
    public static TopicFilter topicFilter(MirrorSourceConfig config) {
        return config.topicFilter();
    }

    /** The checkpoint connector's group filter (group.filter.class, configured with the connector config). */
    public static GroupFilter groupFilter(MirrorCheckpointConfig config) {
        return config.groupFilter();
    }

    /**
     * A MirrorSourceConnector wired as {@code start()} wires it, minus the admin clients, so that
     * {@link #replicates} asks its real {@code shouldReplicateTopic} (filter, heartbeats, internal
     * topics and cycle detection together).
     */
    public static MirrorSourceConnector sourceConnector(SourceAndTarget pair, MirrorSourceConfig config) {
        return new MirrorSourceConnector(pair, config.replicationPolicy(), config.topicFilter(),
                config.configPropertyFilter(), config.heartbeatsReplicationEnabled());
    }

    /** What MirrorSourceConnector decides for one source topic name. */
    public static boolean replicates(MirrorSourceConnector connector, String topic) {
        return connector.shouldReplicateTopic(topic);
    }

    /** Where offset syncs go: "source" or "target" (offset-syncs.topic.location) and the topic's name. */
    public static String offsetSyncsTopicLocation(MirrorSourceConfig config) {
        return config.offsetSyncsTopicLocation();
    }

    public static String offsetSyncsTopic(MirrorSourceConfig config) {
        return config.offsetSyncsTopic();
    }

    public static String checkpointsTopic(MirrorCheckpointConfig config) {
        return config.checkpointsTopic();
    }

    /** The client configs MM2's connectors build from the connector config (role names as in Kafka). */
    public static Map<String, Object> sourceConsumer(MirrorSourceConfig config) {
        return config.sourceConsumerConfig("replication-consumer");
    }

    public static Map<String, Object> sourceAdmin(MirrorSourceConfig config) {
        return config.sourceAdminConfig("replication-source-admin");
    }

    public static Map<String, Object> targetAdmin(MirrorSourceConfig config) {
        return config.targetAdminConfig("replication-target-admin");
    }

    public static Map<String, Object> offsetSyncsProducer(MirrorSourceConfig config) {
        return config.offsetSyncsTopicProducerConfig();
    }
}
