package io.mm2gov.replication;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.mirror.DefaultReplicationPolicy;
import org.apache.kafka.connect.mirror.IdentityReplicationPolicy;
import org.apache.kafka.connect.mirror.ReplicationPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every override of both policies, against the configuration a flow's MM2 file gives them. */
class FlowPolicyTest {

    static final String FLOW = "payments-onprem-to-cloud";
    static final String OFFSET_SYNCS = "mm2gov.payments-onprem-to-cloud.offset-syncs";
    static final String CHECKPOINTS = "mm2gov.payments-onprem-to-cloud.checkpoints";
    static final String HEARTBEATS = "mm2gov.payments-onprem-to-cloud.heartbeats";

    /** What governance/model/names.py gives a flow (written here as literals: Java never derives a name). */
    static Map<String, String> flowConfig(String flow, String offsetSyncs, String checkpoints, String heartbeats) {
        Map<String, String> props = new HashMap<>();
        props.put("replication.policy.separator", ".");
        props.put(FlowTopics.FLOW_ID_CONFIG, flow);
        props.put(FlowTopics.OFFSET_SYNCS_TOPIC_CONFIG, offsetSyncs);
        props.put(FlowTopics.CHECKPOINTS_TOPIC_CONFIG, checkpoints);
        props.put(FlowTopics.HEARTBEATS_TOPIC_CONFIG, heartbeats);
        return props;
    }

    static Map<String, String> payments() {
        return flowConfig(FLOW, OFFSET_SYNCS, CHECKPOINTS, HEARTBEATS);
    }

    static Stream<Arguments> policies() {
        return Stream.of(
                Arguments.of("default", (Supplier<ReplicationPolicy>) FlowReplicationPolicy::new,
                        (Supplier<ReplicationPolicy>) DefaultReplicationPolicy::new),
                Arguments.of("identity", (Supplier<ReplicationPolicy>) FlowIdentityReplicationPolicy::new,
                        (Supplier<ReplicationPolicy>) IdentityReplicationPolicy::new));
    }

    static ReplicationPolicy configured(Supplier<ReplicationPolicy> factory, Map<String, ?> props) {
        ReplicationPolicy policy = factory.get();
        ((org.apache.kafka.common.Configurable) policy).configure(props);
        return policy;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void internalTopicsAreTheFlowsWhateverTheAlias(String kind, Supplier<ReplicationPolicy> flow, Supplier<ReplicationPolicy> kafka) {
        ReplicationPolicy policy = configured(flow, payments());
        for (String alias : List.of("onprem", "cloud", "source", "target")) {
            assertEquals(OFFSET_SYNCS, policy.offsetSyncsTopic(alias));
            assertEquals(CHECKPOINTS, policy.checkpointsTopic(alias));
        }
        assertEquals(HEARTBEATS, policy.heartbeatsTopic());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void checkpointsTopicIsOnlyTheFlows(String kind, Supplier<ReplicationPolicy> flow, Supplier<ReplicationPolicy> kafka) {
        ReplicationPolicy policy = configured(flow, payments());
        assertTrue(policy.isCheckpointsTopic(CHECKPOINTS));
        for (String other : List.of("onprem.checkpoints.internal", "cloud.checkpoints.internal", OFFSET_SYNCS, HEARTBEATS,
                "mm2gov.marketing-onprem-to-cloud.checkpoints", "onprem." + CHECKPOINTS, CHECKPOINTS + ".x")) {
            assertFalse(policy.isCheckpointsTopic(other), other);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void heartbeatsTopicIsTheFlowsAndItsRemoteForms(String kind, Supplier<ReplicationPolicy> flow, Supplier<ReplicationPolicy> kafka) {
        ReplicationPolicy policy = configured(flow, payments());
        for (String heartbeats : List.of(HEARTBEATS, "onprem." + HEARTBEATS, "cloud.onprem." + HEARTBEATS)) {
            assertTrue(policy.isHeartbeatsTopic(heartbeats), heartbeats);
        }
        for (String other : List.of("heartbeats", "onprem.heartbeats", "mm2gov.marketing-onprem-to-cloud.heartbeats",
                "onprem.mm2gov.marketing-onprem-to-cloud.heartbeats", CHECKPOINTS, HEARTBEATS + ".x", "payments.orders")) {
            assertFalse(policy.isHeartbeatsTopic(other), other);
        }
    }

    @Test
    void kafkasOwnDefaultWouldNotRecogniseADottedHeartbeatsName() {
        // why isHeartbeatsTopic is overridden: the interface's default compares with originalTopic(), which strips
        // "mm2gov." and "<flow>." as if they were cluster aliases
        ReplicationPolicy kafkaDefault = new DefaultReplicationPolicy() {
            @Override
            public String heartbeatsTopic() {
                return HEARTBEATS;
            }
        };
        assertEquals("heartbeats", kafkaDefault.originalTopic(HEARTBEATS));
        assertFalse(kafkaDefault.isHeartbeatsTopic(HEARTBEATS));
        assertTrue(configured(FlowReplicationPolicy::new, payments()).isHeartbeatsTopic(HEARTBEATS));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void mm2InternalTopicsAreTheFlowsAndKafkasOwn(String kind, Supplier<ReplicationPolicy> flow, Supplier<ReplicationPolicy> kafka) {
        ReplicationPolicy policy = configured(flow, payments());
        for (String internal : List.of(OFFSET_SYNCS, CHECKPOINTS, "mm2-offset-syncs.cloud.internal",
                "onprem.checkpoints.internal", "mm2-configs.onprem.internal")) {
            assertTrue(policy.isMM2InternalTopic(internal), internal);
            assertTrue(policy.isInternalTopic(internal), internal);
        }
        for (String data : List.of("payments.orders", "onprem.payments.orders", HEARTBEATS, "heartbeats")) {
            assertFalse(policy.isMM2InternalTopic(data), data);
            assertFalse(policy.isInternalTopic(data), data);
        }
        assertTrue(policy.isInternalTopic("__consumer_offsets"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void remoteNamesAreKafkasPolicys(String kind, Supplier<ReplicationPolicy> flow, Supplier<ReplicationPolicy> kafka) {
        Map<String, String> props = payments();
        props.put("source.cluster.alias", "onprem");  // what the identity policy reads for topicSource
        ReplicationPolicy policy = configured(flow, props);
        ReplicationPolicy reference = configured(kafka, props);
        for (String topic : List.of("payments.orders", "payments", "onprem.payments.orders", "cloud.onprem.payments.x",
                "payments.a-b_c", "heartbeats.not")) {
            assertEquals(reference.formatRemoteTopic("onprem", topic), policy.formatRemoteTopic("onprem", topic), topic);
            assertEquals(reference.topicSource(topic), policy.topicSource(topic), topic);
            assertEquals(reference.upstreamTopic(topic), policy.upstreamTopic(topic), topic);
            assertEquals(reference.originalTopic(topic), policy.originalTopic(topic), topic);
        }
    }

    @Test
    void defaultKeepsSourceDotTopic() {
        ReplicationPolicy policy = configured(FlowReplicationPolicy::new, payments());
        assertEquals("onprem.payments.orders", policy.formatRemoteTopic("onprem", "payments.orders"));
        assertEquals("onprem", policy.topicSource("onprem.payments.orders"));
        assertEquals("payments.orders", policy.upstreamTopic("onprem.payments.orders"));
    }

    @Test
    void identityKeepsTheName() {
        Map<String, String> props = payments();
        props.put("source.cluster.alias", "onprem");
        ReplicationPolicy policy = configured(FlowIdentityReplicationPolicy::new, props);
        assertEquals("payments.orders", policy.formatRemoteTopic("onprem", "payments.orders"));
        assertEquals("onprem", policy.topicSource("payments.orders"));
        assertEquals("payments.orders", policy.upstreamTopic("payments.orders"));
        // the flow's heartbeats are prefixed on the target, as Kafka's identity policy does for its heartbeats
        assertEquals("onprem." + HEARTBEATS, policy.formatRemoteTopic("onprem", HEARTBEATS));
    }

    @Test
    void customSeparatorStillReachesKafkasPolicy() {
        Map<String, String> props = payments();
        props.put("replication.policy.separator", "_");
        ReplicationPolicy policy = configured(FlowReplicationPolicy::new, props);
        assertEquals("onprem_payments.orders", policy.formatRemoteTopic("onprem", "payments.orders"));
        assertTrue(policy.isHeartbeatsTopic("onprem_" + HEARTBEATS));
        assertEquals(OFFSET_SYNCS, policy.offsetSyncsTopic("cloud"));
    }

    static Stream<Arguments> missingKeys() {
        List<Arguments> cases = new ArrayList<>();
        for (Arguments policy : policies().toList()) {
            for (String key : List.of(FlowTopics.OFFSET_SYNCS_TOPIC_CONFIG, FlowTopics.CHECKPOINTS_TOPIC_CONFIG,
                    FlowTopics.HEARTBEATS_TOPIC_CONFIG)) {
                for (String value : new String[] {null, "", "   "}) {
                    cases.add(Arguments.of(policy.get()[0], policy.get()[1], key, value));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} without {2}={3}")
    @MethodSource("missingKeys")
    void aMissingOrBlankNameFailsClosedNamingKeyAndFlow(String kind, Supplier<ReplicationPolicy> flow, String key, String value) {
        Map<String, String> props = payments();
        if (value == null) {
            props.remove(key);
        } else {
            props.put(key, value);
        }
        ConfigException failure = assertThrows(ConfigException.class, () -> configured(flow, props));
        assertTrue(failure.getMessage().contains("\"" + key + "\""), failure.getMessage());
        assertTrue(failure.getMessage().contains("for flow " + FLOW), failure.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void aMissingFlowIdFailsClosed(String kind, Supplier<ReplicationPolicy> flow, Supplier<ReplicationPolicy> kafka) {
        for (String value : new String[] {null, " "}) {
            Map<String, String> props = payments();
            if (value == null) {
                props.remove(FlowTopics.FLOW_ID_CONFIG);
            } else {
                props.put(FlowTopics.FLOW_ID_CONFIG, value);
            }
            ConfigException failure = assertThrows(ConfigException.class, () -> configured(flow, props));
            assertTrue(failure.getMessage().contains("\"mm2gov.flow.id\""), failure.getMessage());
        }
        ConfigException nothing = assertThrows(ConfigException.class, () -> configured(flow, Map.of()));
        assertTrue(nothing.getMessage().contains("mm2gov.flow.id"), nothing.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void oneTopicForTwoRolesFailsClosed(String kind, Supplier<ReplicationPolicy> flow, Supplier<ReplicationPolicy> kafka) {
        ConfigException failure = assertThrows(ConfigException.class,
                () -> configured(flow, flowConfig(FLOW, OFFSET_SYNCS, OFFSET_SYNCS, HEARTBEATS)));
        assertTrue(failure.getMessage().contains(FlowTopics.CHECKPOINTS_TOPIC_CONFIG), failure.getMessage());
        assertTrue(failure.getMessage().contains(FLOW), failure.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void unconfiguredPolicyHasNoNames(String kind, Supplier<ReplicationPolicy> flow, Supplier<ReplicationPolicy> kafka) {
        ReplicationPolicy policy = flow.get();
        assertThrows(IllegalStateException.class, () -> policy.offsetSyncsTopic("cloud"));
        assertThrows(IllegalStateException.class, () -> policy.checkpointsTopic("onprem"));
        assertThrows(IllegalStateException.class, policy::heartbeatsTopic);
        assertThrows(IllegalStateException.class, () -> policy.isCheckpointsTopic(CHECKPOINTS));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void namesAreTrimmedAsKafkaTrimsStrings(String kind, Supplier<ReplicationPolicy> flow, Supplier<ReplicationPolicy> kafka) {
        ReplicationPolicy policy = configured(flow, flowConfig(" " + FLOW, OFFSET_SYNCS + " ", "\t" + CHECKPOINTS, HEARTBEATS));
        assertEquals(OFFSET_SYNCS, policy.offsetSyncsTopic("cloud"));
        assertEquals(CHECKPOINTS, policy.checkpointsTopic("onprem"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void twoFlowsHaveDisjointInternalTopics(String kind, Supplier<ReplicationPolicy> flow, Supplier<ReplicationPolicy> kafka) {
        ReplicationPolicy payments = configured(flow, payments());
        ReplicationPolicy marketing = configured(flow, flowConfig("marketing-onprem-to-cloud",
                "mm2gov.marketing-onprem-to-cloud.offset-syncs", "mm2gov.marketing-onprem-to-cloud.checkpoints",
                "mm2gov.marketing-onprem-to-cloud.heartbeats"));
        Set<String> mine = names(payments);
        Set<String> theirs = names(marketing);
        assertEquals(3, mine.size());
        assertEquals(3, theirs.size());
        Set<String> shared = new HashSet<>(mine);
        shared.retainAll(theirs);
        assertEquals(Set.of(), shared);
        assertFalse(payments.isCheckpointsTopic(marketing.checkpointsTopic("onprem")));
        assertFalse(payments.isHeartbeatsTopic(marketing.heartbeatsTopic()));
        assertFalse(marketing.isCheckpointsTopic(payments.checkpointsTopic("onprem")));
        // and none of MirrorMaker 2's shared names
        ReplicationPolicy kafkaDefault = new DefaultReplicationPolicy();
        Set<String> sharedNames = Set.of(kafkaDefault.heartbeatsTopic(), kafkaDefault.checkpointsTopic("onprem"),
                kafkaDefault.offsetSyncsTopic("cloud"), kafkaDefault.offsetSyncsTopic("onprem"));
        for (String name : mine) {
            assertFalse(sharedNames.contains(name), name);
        }
    }

    private static Set<String> names(ReplicationPolicy policy) {
        return Set.of(policy.offsetSyncsTopic("onprem"), policy.checkpointsTopic("onprem"), policy.heartbeatsTopic());
    }
}
