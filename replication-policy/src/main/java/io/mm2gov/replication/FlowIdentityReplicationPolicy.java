package io.mm2gov.replication;

import org.apache.kafka.connect.mirror.IdentityReplicationPolicy;

import java.util.Map;

/**
 * Kafka's {@link IdentityReplicationPolicy} (remote topics keep their names) with one flow's own internal
 * topics, exactly as {@link FlowReplicationPolicy} does for the default policy; the names come from the
 * flow's configuration ({@link FlowTopics}).
 *
 * <p>The identity policy treats a topic ending with {@link #heartbeatsTopic()} as a heartbeats topic and
 * prefixes it on the target like the default policy does; with this class that is the flow's own
 * heartbeats topic. Set {@code replication.policy.class=io.mm2gov.replication.FlowIdentityReplicationPolicy}.
 */
public class FlowIdentityReplicationPolicy extends IdentityReplicationPolicy {

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
