package io.mm2gov.oracle;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.mirror.GroupFilter;
import org.apache.kafka.connect.mirror.MirrorCheckpointConfig;
import org.apache.kafka.connect.mirror.MirrorCheckpointConnector;
import org.apache.kafka.connect.mirror.MirrorConnectorConfig;
import org.apache.kafka.connect.mirror.MirrorHeartbeatConfig;
import org.apache.kafka.connect.mirror.MirrorHeartbeatConnector;
import org.apache.kafka.connect.mirror.MirrorMakerConfig;
import org.apache.kafka.connect.mirror.MirrorSourceConfig;
import org.apache.kafka.connect.mirror.MirrorSourceConnector;
import org.apache.kafka.connect.mirror.OracleAccess;
import org.apache.kafka.connect.mirror.ReplicationPolicy;
import org.apache.kafka.connect.mirror.SourceAndTarget;
import org.apache.kafka.connect.mirror.TopicFilter;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * What a dedicated-mode MirrorMaker 2 does with one properties file, asked of MirrorMakerConfig and the
 * connector classes MirrorMaker runs (MirrorMaker.CONNECTOR_CLASSES), the way MirrorHerder configures them.
 *
 * <p>Answer: {@code {"clusters":[...], "dropped_keys":[...], "pairs":[pair, ...]}}, one pair per herder
 * ({@code MirrorMakerConfig.clusterPairs()}: enabled flows and heartbeat-only ones), sorted, each:
 * <pre>
 * {"source":"a","target":"b","enabled":true,
 *  "topics":[...]        names MirrorSourceConnector.shouldReplicateTopic passes (filter, heartbeats, internal, cycles),
 *  "topic_filter":[...]  names the configured topic.filter.class alone passes,
 *  "remote_topics":{"t":"a.t"}  the target name of each replicated topic (replication.policy.class),
 *  "groups":[...]        names the checkpoint connector's group.filter.class passes
 *                        (topics/topic_filter/remote_topics/groups are null when the pair is not enabled),
 *  "connector_errors":{"MirrorSourceConnector":{"key":["message"]},...}  Connector.validate, as the herder runs it,
 *  "settings":{"sync.topic.acls.enabled":false, "topics":[...], "group.id":"...", ...},
 *  "clients":{"source_consumer":{client},"source_admin":..,"target_admin":..,"offset_syncs_producer":..,
 *             "worker":..,"worker_producer":..},
 *  "overrides":{"raw key":"value"|"[redacted]"}}   client settings the file gives this pair
 * client: {"bootstrap.servers":..,"security.protocol":..,"sasl.mechanism":..,"sasl.jaas.config":"unset|reference|inline|set",
 *          "secrets":{"key":"reference|inline|set"}}
 * </pre>
 * A pair whose connector config Kafka rejects has {@code "error"} instead of the fields after "target".
 */
final class Mm2Report {

    /** After its pair or alias prefix: a key that sets a client of the connectors or of the worker. */
    private static final Pattern CLIENT_KEY = Pattern.compile("^(source|target)\\.|^(consumer|producer|admin)\\.|\\.override\\.");

    private Mm2Report() {
    }

    /**
     * Config providers are not resolved: every {@code config.providers*} key (top level, per alias, per pair or
     * per client, as AbstractConfig would resolve any of them) is dropped first, so {@code ${dir:...}} references
     * stay verbatim. Generated files point at secret files that do not exist where the oracle runs, and the
     * oracle must never read a secret anyway.
     */
    static ObjectNode answer(Map<String, String> fileProps, List<String> topics, List<String> groups) {
        Map<String, String> props = new TreeMap<>(fileProps);
        List<String> dropped = new ArrayList<>();
        props.keySet().removeIf(key -> {
            boolean provider = key.equals("config.providers") || key.startsWith("config.providers.")
                    || key.contains(".config.providers");
            if (provider) {
                dropped.add(key);
            }
            return provider;
        });
        // MirrorMakerConfig builds a Plugins instance that serves config providers only (never used here). Its default
        // discovery (hybrid_warn) scans every jar on the class path, ~2 s per request; ServiceLoader discovery does not.
        // The key reaches nothing else: connectorBaseConfig and workerConfig do not copy it.
        Map<String, String> mmProps = new HashMap<>(props);
        mmProps.put("plugin.discovery", "service_load");
        MirrorMakerConfig config = new MirrorMakerConfig(mmProps);

        ObjectNode answer = Oracle.JSON.createObjectNode();
        ArrayNode clusters = answer.putArray("clusters");
        new TreeSet<>(config.clusters()).forEach(clusters::add);
        ArrayNode droppedKeys = answer.putArray("dropped_keys");
        dropped.forEach(droppedKeys::add);
        ArrayNode pairs = answer.putArray("pairs");
        List<SourceAndTarget> herders = new ArrayList<>(config.clusterPairs());
        herders.sort(Comparator.comparing(SourceAndTarget::source).thenComparing(SourceAndTarget::target));
        for (SourceAndTarget pair : herders) {
            ObjectNode node = Oracle.JSON.createObjectNode().put("source", pair.source()).put("target", pair.target());
            try {
                describe(config, props, pair, topics, groups, node);
            } catch (RuntimeException e) {
                node = Oracle.JSON.createObjectNode().put("source", pair.source()).put("target", pair.target());
                node.put("error", Secrets.scrub(String.valueOf(e.getMessage()), props));
                node.put("exception", e.getClass().getName());
            }
            pairs.add(node);
        }
        return answer;
    }

    private static void describe(MirrorMakerConfig config, Map<String, String> props, SourceAndTarget pair,
                                 List<String> topics, List<String> groups, ObjectNode node) {
        Map<String, String> sourceProps = config.connectorBaseConfig(pair, MirrorSourceConnector.class);
        Map<String, String> checkpointProps = config.connectorBaseConfig(pair, MirrorCheckpointConnector.class);
        Map<String, String> heartbeatProps = config.connectorBaseConfig(pair, MirrorHeartbeatConnector.class);
        MirrorSourceConfig source = new MirrorSourceConfig(sourceProps);
        MirrorCheckpointConfig checkpoint = new MirrorCheckpointConfig(checkpointProps);
        MirrorHeartbeatConfig heartbeat = new MirrorHeartbeatConfig(heartbeatProps);
        Map<String, String> worker = config.workerConfig(pair);

        boolean enabled = OracleAccess.enabled(source);
        node.put("enabled", enabled);
        if (enabled) {
            MirrorSourceConnector connector = OracleAccess.sourceConnector(pair, source);
            TopicFilter topicFilter = OracleAccess.topicFilter(source);
            ReplicationPolicy policy = OracleAccess.replicationPolicy(source);
            GroupFilter groupFilter = OracleAccess.groupFilter(checkpoint);
            ArrayNode replicated = node.putArray("topics");
            ArrayNode filtered = node.putArray("topic_filter");
            ObjectNode remote = node.putObject("remote_topics");
            for (String topic : topics) {
                if (OracleAccess.replicates(connector, topic)) {
                    replicated.add(topic);
                    remote.put(topic, policy.formatRemoteTopic(pair.source(), topic));
                }
                if (topicFilter.shouldReplicateTopic(topic)) {
                    filtered.add(topic);
                }
            }
            ArrayNode synced = node.putArray("groups");
            groups.stream().filter(groupFilter::shouldReplicateGroup).forEach(synced::add);
        } else {
            node.putNull("topics").putNull("topic_filter").putNull("remote_topics").putNull("groups");
        }

        ObjectNode errors = node.putObject("connector_errors");
        errors.set("MirrorSourceConnector", validate(new MirrorSourceConnector(), sourceProps, props));
        errors.set("MirrorCheckpointConnector", validate(new MirrorCheckpointConnector(), checkpointProps, props));
        errors.set("MirrorHeartbeatConnector", validate(new MirrorHeartbeatConnector(), heartbeatProps, props));

        ObjectNode settings = node.putObject("settings");
        settings.put("sync.topic.acls.enabled", source.getBoolean("sync.topic.acls.enabled"));
        settings.put("sync.topic.configs.enabled", source.getBoolean("sync.topic.configs.enabled"));
        settings.put("emit.offset-syncs.enabled", source.getBoolean("emit.offset-syncs.enabled"));
        settings.put("offset-syncs.topic.location", OracleAccess.offsetSyncsTopicLocation(source));
        settings.put("offset-syncs.topic", OracleAccess.offsetSyncsTopic(source));
        settings.put("heartbeats.replication.enabled", source.getBoolean("heartbeats.replication.enabled"));
        settings.put("emit.checkpoints.enabled", checkpoint.getBoolean("emit.checkpoints.enabled"));
        settings.put("sync.group.offsets.enabled", checkpoint.getBoolean("sync.group.offsets.enabled"));
        settings.put("checkpoints.topic", OracleAccess.checkpointsTopic(checkpoint));
        settings.put("emit.heartbeats.enabled", heartbeat.getBoolean("emit.heartbeats.enabled"));
        settings.put("replication.policy.class", source.getClass(MirrorConnectorConfig.REPLICATION_POLICY_CLASS).getName());
        settings.put("replication.policy.separator", source.getString(MirrorConnectorConfig.REPLICATION_POLICY_SEPARATOR));
        settings.put("topic.filter.class", source.getClass(MirrorConnectorConfig.TOPIC_FILTER_CLASS).getName());
        putList(settings, "topics", source.getList("topics"));
        putList(settings, "topics.exclude", source.getList("topics.exclude"));
        settings.put("group.filter.class", checkpoint.getClass(MirrorCheckpointConfig.GROUP_FILTER_CLASS).getName());
        putList(settings, "groups", checkpoint.getList("groups"));
        putList(settings, "groups.exclude", checkpoint.getList("groups.exclude"));
        // The Connect worker of this herder (DistributedConfig names): its group and internal topics on the target.
        for (String key : List.of("group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic")) {
            settings.put(key, worker.get(key));
        }

        ObjectNode clients = node.putObject("clients");
        clients.set("source_consumer", client(OracleAccess.sourceConsumer(source)));
        clients.set("source_admin", client(OracleAccess.sourceAdmin(source)));
        clients.set("target_admin", client(OracleAccess.targetAdmin(source)));
        clients.set("offset_syncs_producer", client(OracleAccess.offsetSyncsProducer(source)));
        clients.set("worker", client(worker));
        clients.set("worker_producer", client(workerProducer(worker, sourceProps)));

        ObjectNode overrides = node.putObject("overrides");
        props.forEach((key, value) -> {
            String rest = unprefixed(key, pair);
            if (rest != null && CLIENT_KEY.matcher(rest).find()) {
                overrides.put(key, Secrets.isSecretKey(key) ? Secrets.REDACTED : value);
            }
        });
    }

    /**
     * The producer that writes replicated records to the target: Connect's Worker.baseProducerConfigs takes the
     * worker's bootstrap.servers and {@code producer.*}, then the connector's {@code producer.override.*}
     * (connector.client.config.override.policy defaults to All). Mirrored here because that method needs a
     * running worker; only the keys that decide where and as whom it connects matter.
     */
    private static Map<String, Object> workerProducer(Map<String, String> worker, Map<String, String> connector) {
        Map<String, Object> producer = new HashMap<>();
        producer.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, worker.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG));
        producer.putAll(Utils.entriesWithPrefix(worker, "producer."));
        producer.putAll(Utils.entriesWithPrefix(connector, "producer.override."));
        return producer;
    }

    /** The key without this pair's prefix or one of its aliases' prefixes; null if it is another pair's or alias's. */
    private static String unprefixed(String key, SourceAndTarget pair) {
        String pairPrefix = pair.source() + "->" + pair.target() + ".";
        if (key.startsWith(pairPrefix)) {
            return key.substring(pairPrefix.length());
        }
        if (key.contains("->")) {
            return null;
        }
        for (String alias : List.of(pair.source(), pair.target())) {
            if (key.startsWith(alias + ".")) {
                return key.substring(alias.length() + 1);
            }
        }
        return null;
    }

    /** Where and as whom a client connects; secrets only as "unset/reference/inline/set". */
    private static ObjectNode client(Map<String, ?> config) {
        ObjectNode node = Oracle.JSON.createObjectNode();
        Object protocol = config.get(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG);
        String effectiveProtocol = protocol == null ? CommonClientConfigs.DEFAULT_SECURITY_PROTOCOL : String.valueOf(protocol);
        Object mechanism = config.get(SaslConfigs.SASL_MECHANISM);
        if (mechanism == null && effectiveProtocol.startsWith("SASL_")) {
            mechanism = SaslConfigs.DEFAULT_SASL_MECHANISM;
        }
        Object bootstrap = config.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        node.put("bootstrap.servers", bootstrap == null ? null : String.valueOf(bootstrap));
        node.put("security.protocol", effectiveProtocol);
        node.put("sasl.mechanism", mechanism == null ? null : String.valueOf(mechanism));
        node.put("sasl.jaas.config", Secrets.status(config.get(SaslConfigs.SASL_JAAS_CONFIG)));
        ObjectNode secrets = node.putObject("secrets");
        new TreeMap<String, Object>(config).forEach((key, value) -> {
            if (Secrets.isSecretKey(key)) {
                secrets.put(key, Secrets.status(value));
            }
        });
        return node;
    }

    /** Connector.validate as the herder runs it before it creates the connector: config key to messages. */
    private static ObjectNode validate(Connector connector, Map<String, String> connectorProps, Map<String, String> props) {
        ObjectNode errors = Oracle.JSON.createObjectNode();
        for (ConfigValue value : connector.validate(connectorProps).configValues()) {
            if (!value.errorMessages().isEmpty()) {
                ArrayNode messages = errors.putArray(value.name());
                value.errorMessages().forEach(message -> messages.add(Secrets.scrub(message, props)));
            }
        }
        return errors;
    }

    private static void putList(ObjectNode node, String key, List<String> items) {
        ArrayNode array = node.putArray(key);
        items.forEach(array::add);
    }
}
