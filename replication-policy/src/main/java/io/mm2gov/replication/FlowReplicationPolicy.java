package io.mm2gov.replication;

import org.apache.kafka.connect.mirror.DefaultReplicationPolicy;

import java.util.Map;

/**
 * Kafka's {@link DefaultReplicationPolicy} (remote topics stay {@code <source>.<topic>}) with one flow's own
 * internal topics: offset-syncs, checkpoints and heartbeats named by the flow's configuration
 * ({@link FlowTopics}), inside the flow's {@code mm2gov.<flow>.} space, instead of the per-cluster-alias names
 * that every flow between the same two clusters would share (KIP-690).
 *
 * <p>One flow runs per dedicated MirrorMaker 2, so the cluster alias that Kafka passes to
 * {@link #offsetSyncsTopic} and {@link #checkpointsTopic} is not part of the name.
 * Set {@code replication.policy.class=io.mm2gov.replication.FlowReplicationPolicy}.
 */
public class FlowReplicationPolicy extends DefaultReplicationPolicy {

    private FlowTopics topics;

    @Override
    public void configure(Map<String, ?> props) {
        super.configure(props);
        topics = FlowTopics.from(props);
    }

    /** The flow's names; only after {@link #configure}, never a default. */
    public FlowTopics flowTopics() {
        if (topics == null) {
            throw new IllegalStateException(getClass().getName() + " is used before configure(): it has no flow");
        }
        return topics;
    }

    @Override
    public String offsetSyncsTopic(String clusterAlias) {
        return flowTopics().offsetSyncs();
    }

    @Override
    public String checkpointsTopic(String clusterAlias) {
        return flowTopics().checkpoints();
    }

    @Override
    public String heartbeatsTopic() {
        return flowTopics().heartbeats();
    }

    @Override
    public boolean isCheckpointsTopic(String topic) {
        return flowTopics().checkpoints().equals(topic);
    }

    @Override
    public boolean isHeartbeatsTopic(String topic) {
        return flowTopics().isHeartbeats(this, topic);
    }

    /** The flow's offset-syncs and checkpoints topics, and whatever Kafka's policy counts as MM2's (shared names too). */
    @Override
    public boolean isMM2InternalTopic(String topic) {
        return flowTopics().isInternal(topic) || super.isMM2InternalTopic(topic) || super.isCheckpointsTopic(topic);
    }
}
