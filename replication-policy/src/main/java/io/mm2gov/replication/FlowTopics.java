package io.mm2gov.replication;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.mirror.ReplicationPolicy;

import java.util.List;
import java.util.Map;

/**
 * One flow's MirrorMaker 2 internal topic names, read from the policy's configuration: the keys below,
 * which mm2gov writes into each flow's MM2 properties (the names are computed by
 * {@code governance/model/names.py} and nowhere else; nothing here derives a name).
 *
 * <p>Fail closed: a key that is missing or blank, or two of the three names being one topic, is a
 * {@link ConfigException} naming the key (and the flow, when its id is known). The policy never falls back
 * to MirrorMaker 2's shared names ({@code heartbeats}, {@code <alias>.checkpoints.internal},
 * {@code mm2-offset-syncs.<alias>.internal}), which every flow between the same clusters would share.
 */
public final class FlowTopics {

    public static final String FLOW_ID_CONFIG = "mm2gov.flow.id";
    public static final String OFFSET_SYNCS_TOPIC_CONFIG = "mm2gov.flow.offset-syncs.topic";
    public static final String CHECKPOINTS_TOPIC_CONFIG = "mm2gov.flow.checkpoints.topic";
    public static final String HEARTBEATS_TOPIC_CONFIG = "mm2gov.flow.heartbeats.topic";

    private final String flowId;
    private final String offsetSyncs;
    private final String checkpoints;
    private final String heartbeats;

    private FlowTopics(String flowId, String offsetSyncs, String checkpoints, String heartbeats) {
        this.flowId = flowId;
        this.offsetSyncs = offsetSyncs;
        this.checkpoints = checkpoints;
        this.heartbeats = heartbeats;
    }

    /** The flow's names from a policy's {@code configure()} map; ConfigException when one is missing or blank. */
    public static FlowTopics from(Map<String, ?> props) {
        String flowId = value(props, FLOW_ID_CONFIG);
        if (flowId == null) {
            throw new ConfigException("Missing required configuration \"" + FLOW_ID_CONFIG + "\": the mm2gov "
                    + "replication policy names the flow's internal topics only from its own configuration");
        }
        FlowTopics topics = new FlowTopics(flowId, required(props, OFFSET_SYNCS_TOPIC_CONFIG, flowId),
                required(props, CHECKPOINTS_TOPIC_CONFIG, flowId), required(props, HEARTBEATS_TOPIC_CONFIG, flowId));
        List<String> keys = List.of(OFFSET_SYNCS_TOPIC_CONFIG, CHECKPOINTS_TOPIC_CONFIG, HEARTBEATS_TOPIC_CONFIG);
        List<String> names = List.of(topics.offsetSyncs, topics.checkpoints, topics.heartbeats);
        for (int i = 0; i < names.size(); i++) {
            for (int j = i + 1; j < names.size(); j++) {
                if (names.get(i).equals(names.get(j))) {
                    throw new ConfigException(keys.get(j), names.get(j), "flow " + flowId + " gives "
                            + keys.get(i) + " and " + keys.get(j) + " the same topic");
                }
            }
        }
        return topics;
    }

    private static String required(Map<String, ?> props, String key, String flowId) {
        String value = value(props, key);
        if (value == null) {
            throw new ConfigException("Missing required configuration \"" + key + "\" for flow " + flowId
                    + ": the mm2gov replication policy never falls back to MirrorMaker 2's shared topic names");
        }
        return value;
    }

    /** The value as Kafka parses a STRING config (trimmed); null when absent or blank. */
    private static String value(Map<String, ?> props, String key) {
        Object raw = props.get(key);
        if (raw == null) {
            return null;
        }
        String value = raw.toString().trim();
        return value.isEmpty() ? null : value;
    }

    public String flowId() {
        return flowId;
    }

    public String offsetSyncs() {
        return offsetSyncs;
    }

    public String checkpoints() {
        return checkpoints;
    }

    public String heartbeats() {
        return heartbeats;
    }

    /** The flow's offset-syncs or checkpoints topic (what MM2 must never replicate as data). */
    public boolean isInternal(String topic) {
        return offsetSyncs.equals(topic) || checkpoints.equals(topic);
    }

    /**
     * The flow's heartbeats topic or one of its remote forms ({@code <source>.<heartbeats>}, over any number of
     * hops), as {@link ReplicationPolicy#isHeartbeatsTopic} means it. The interface's default compares with
     * {@code originalTopic(topic)}, which strips every {@code <word>.} prefix and so turns a dotted name such as
     * {@code mm2gov.<flow>.heartbeats} into {@code heartbeats}: it would never match. Walking the upstream
     * chain instead stops at the configured name.
     */
    public boolean isHeartbeats(ReplicationPolicy policy, String topic) {
        String current = topic;
        while (current != null) {
            if (heartbeats.equals(current)) {
                return true;
            }
            String upstream = policy.upstreamTopic(current);
            if (upstream == null || upstream.equals(current)) {
                return false;
            }
            current = upstream;
        }
        return false;
    }

    @Override
    public String toString() {
        return "flow " + flowId + " (offset-syncs " + offsetSyncs + ", checkpoints " + checkpoints
                + ", heartbeats " + heartbeats + ")";
    }
}
