package io.mm2gov.oracle;

import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.connect.mirror.DefaultGroupFilter;
import org.apache.kafka.connect.mirror.DefaultTopicFilter;
import org.apache.kafka.connect.mirror.OracleAccess;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The other side's code as an oracle: what Kafka and MirrorMaker 2 (the version on the class path) make of a
 * configuration, answered by their own classes, so that mm2gov's claims can be tested against them.
 *
 * <p>Run {@code java -cp 'mm2gov-oracle.jar:<kafka>/libs/*' io.mm2gov.oracle.Oracle}. It reads one JSON
 * request per line on stdin and writes one JSON answer per line on stdout, in order, flushed after each.
 * Every request may carry an {@code "id"} (any JSON value), copied into its answer. A request that fails
 * is answered {@code {"error": "<Java's message>", "exception": "<Java class>"}}; the process goes on.
 * Blank lines are ignored. Nothing else is written to stdout (System.out is redirected to stderr for Kafka's own printing).
 *
 * <pre>
 * {"op":"ping"}
 *   -&gt; {"pong":true,"kafka_version":"4.3.1"}
 * {"op":"properties","text":"...","as":"file"|"reader"}   or   {"op":"properties","path":"/x.properties"}
 *   -&gt; {"properties":{"key":"value"|null,...},"redacted":["key",...]}
 *   path: Utils.loadProps (what MirrorMaker's main reads: Properties.load(InputStream), ISO-8859-1).
 *   text, as "file" (default): the text saved as UTF-8 and read the same way; as "reader": Properties.load(Reader).
 *   Values of secret-looking keys (password, jaas, secret, token, credential, ...) are null and listed in "redacted".
 * {"op":"list","value":"a, b ,c"}
 *   -&gt; {"items":["a","b","c"],"filter_items":["a","b","c"]|null,"filter_error":null|"...","validate_errors":["..."]}
 *   items: ConfigDef.parseType(.., Type.LIST). The rest through DefaultTopicFilter's definition of topics (LIST with
 *   ValidList.anyNonDuplicateValues(true,false), as for topics.exclude, groups, groups.exclude in Kafka 4.x):
 *   filter_items/filter_error from ConfigDef.parse (what the filter gets: duplicates dropped, empty items an error),
 *   validate_errors from ConfigDef.validate (what Connector.validate reports: duplicates are an error there).
 * {"op":"regex","kind":"topic"|"group","include":"&lt;LIST&gt;","exclude":"&lt;LIST&gt;","names":["..."]}
 *   -&gt; {"matches":["..."]}   (the names, in request order, that the filter passes)
 *   A real DefaultTopicFilter (topics, topics.exclude) or DefaultGroupFilter (groups, groups.exclude),
 *   configured and asked shouldReplicateTopic / shouldReplicateGroup. "exclude" absent or null: MM2's default.
 * {"op":"mm2","text":"..."|"path":"...","as":"file"|"reader","topics":["..."],"groups":["..."]}
 *   -&gt; {"clusters":[...],"dropped_keys":[...],"pairs":[{pair},...]}   (see {@link Mm2Report})
 * </pre>
 */
public final class Oracle {

    /** ASCII-only output: lone surrogates (a Properties escape can make one) survive as JSON escapes, not as bad UTF-8. */
    static final ObjectMapper JSON = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

    private Oracle() {
    }

    public static void main(String[] args) throws IOException {
        PrintStream answers = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        // The protocol owns stdout; Kafka's own printing (log4j's default console appender, Utils.loadProps) goes to stderr.
        System.setOut(System.err);
        // Config providers are never resolved: Mm2Report drops every config.providers key, and should one slip
        // through, AbstractConfig refuses any provider class not in this (impossible) allow-list rather than reading files.
        System.setProperty(AbstractConfig.AUTOMATIC_CONFIG_PROVIDERS_PROPERTY, "none");
        BufferedReader requests = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = requests.readLine()) != null) {
            if (!line.isBlank()) {
                answers.print(answer(line));
                answers.print('\n');
                answers.flush();
            }
        }
    }

    /** One request line to one answer line; never throws. */
    static String answer(String line) {
        ObjectNode answer;
        JsonNode id = null;
        try {
            JsonNode request = JSON.readTree(line);
            id = request.get("id");
            answer = handle(request);
        } catch (Exception | StackOverflowError e) {
            answer = error(e);
        }
        if (id != null) {
            answer.set("id", id);
        }
        try {
            return JSON.writeValueAsString(answer);
        } catch (IOException e) {
            return "{\"error\":\"cannot write the answer as JSON\",\"exception\":\"" + e.getClass().getName() + "\"}";
        }
    }

    static ObjectNode handle(JsonNode request) throws IOException {
        if (!request.isObject()) {
            throw new IllegalArgumentException("a request is a JSON object with \"op\"");
        }
        String op = string(request, "op");
        switch (op) {
            case "ping":
                return JSON.createObjectNode().put("pong", true).put("kafka_version", AppInfoParser.getVersion());
            case "properties":
                return properties(load(request));
            case "list":
                return list(string(request, "value"));
            case "regex":
                return regex(string(request, "kind"), string(request, "include"), optionalString(request, "exclude"),
                        strings(request, "names"));
            case "regex_work":
                return regexWork(string(request, "regex"), strings(request, "names"));
            case "mm2":
                Map<String, String> props = load(request);
                try {
                    return Mm2Report.answer(props, strings(request, "topics"), strings(request, "groups"));
                } catch (RuntimeException | StackOverflowError e) {
                    throw new Failure(Secrets.scrub(String.valueOf(e.getMessage()), props), e);
                }
            default:
                throw new IllegalArgumentException("unknown op '" + op + "': expected ping, properties, list, regex, regex_work or mm2");
        }
    }

    /** The key/value map MirrorMaker builds from its file: Properties.load then Utils.propsToStringMap. */
    static Map<String, String> load(JsonNode request) throws IOException {
        Properties props;
        if (request.hasNonNull("path")) {
            props = Utils.loadProps(string(request, "path"));
        } else {
            String text = string(request, "text");
            String as = request.hasNonNull("as") ? string(request, "as") : "file";
            props = new Properties();
            if (as.equals("file")) {
                props.load(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
            } else if (as.equals("reader")) {
                props.load(new StringReader(text));
            } else {
                throw new IllegalArgumentException("\"as\" is \"file\" or \"reader\", not '" + as + "'");
            }
        }
        return new TreeMap<>(Utils.propsToStringMap(props));
    }

    static ObjectNode properties(Map<String, String> props) {
        ObjectNode answer = JSON.createObjectNode();
        ObjectNode values = answer.putObject("properties");
        ArrayNode redacted = answer.putArray("redacted");
        props.forEach((key, value) -> {
            if (Secrets.isSecretKey(key)) {
                values.putNull(key);
                redacted.add(key);
            } else {
                values.put(key, value);
            }
        });
        return answer;
    }

    /**
     * A string as Kafka parses a LIST config (trimmed, split on commas with the whitespace around them), and what
     * the two paths through DefaultTopicFilter's own definition of {@code topics} make of it: ConfigDef.parse (the
     * filter's configure(): drops duplicate items with a warning, rejects empty ones) and ConfigDef.validate
     * (Connector.validate, run by the herder before it creates a connector: rejects duplicates too).
     */
    static ObjectNode list(String value) {
        List<?> items = (List<?>) ConfigDef.parseType("value", value, ConfigDef.Type.LIST);
        ObjectNode answer = JSON.createObjectNode();
        ArrayNode array = answer.putArray("items");
        items.forEach(item -> array.add(String.valueOf(item)));
        ConfigDef definition = OracleAccess.topicFilterConfigDef();
        Map<String, String> config = Map.of(DefaultTopicFilter.TOPICS_INCLUDE_CONFIG, value);
        try {
            Object parsed = definition.parse(config).get(DefaultTopicFilter.TOPICS_INCLUDE_CONFIG);
            ArrayNode filterItems = answer.putArray("filter_items");
            ((List<?>) parsed).forEach(item -> filterItems.add(String.valueOf(item)));
            answer.putNull("filter_error");
        } catch (ConfigException e) {
            answer.putNull("filter_items");
            answer.put("filter_error", e.getMessage());
        }
        ArrayNode validateErrors = answer.putArray("validate_errors");
        for (ConfigValue checked : definition.validate(config)) {
            if (checked.name().equals(DefaultTopicFilter.TOPICS_INCLUDE_CONFIG)) {
                checked.errorMessages().forEach(validateErrors::add);
            }
        }
        return answer;
    }

    /** The names MM2's default filter passes, asked of a real, configured DefaultTopicFilter/DefaultGroupFilter. */
    static ObjectNode regex(String kind, String include, String exclude, List<String> names) {
        Map<String, String> config = new HashMap<>();
        java.util.function.Predicate<String> passes;
        if (kind.equals("topic")) {
            config.put(DefaultTopicFilter.TOPICS_INCLUDE_CONFIG, include);
            if (exclude != null) {
                config.put(DefaultTopicFilter.TOPICS_EXCLUDE_CONFIG, exclude);
            }
            DefaultTopicFilter filter = new DefaultTopicFilter();
            filter.configure(config);
            passes = filter::shouldReplicateTopic;
        } else if (kind.equals("group")) {
            config.put(DefaultGroupFilter.GROUPS_INCLUDE_CONFIG, include);
            if (exclude != null) {
                config.put(DefaultGroupFilter.GROUPS_EXCLUDE_CONFIG, exclude);
            }
            DefaultGroupFilter filter = new DefaultGroupFilter();
            filter.configure(config);
            passes = filter::shouldReplicateGroup;
        } else {
            throw new IllegalArgumentException("\"kind\" is \"topic\" or \"group\", not '" + kind + "'");
        }
        ObjectNode answer = JSON.createObjectNode();
        ArrayNode matches = answer.putArray("matches");
        names.stream().filter(passes).forEach(matches::add);
        return answer;
    }

    /** A name that counts how often Java's regex engine reads one of its characters: the engine's work. */
    static final class CountingName implements CharSequence {
        final String text;
        long reads;

        CountingName(String text) {
            this.text = text;
        }

        @Override public char charAt(int index) {
            reads++;
            return text.charAt(index);
        }

        @Override public int length() {
            return text.length();
        }

        @Override public CharSequence subSequence(int start, int end) {
            return text.subSequence(start, end);
        }

        @Override public String toString() {
            return text;
        }
    }

    /** Per name: whether `regex` matches it whole (as MM2's filters match) and how many reads that took. */
    static ObjectNode regexWork(String regex, List<String> names) {
        java.util.regex.Pattern pattern = java.util.regex.Pattern.compile(regex);
        ObjectNode answer = JSON.createObjectNode();
        ArrayNode reads = answer.putArray("reads");
        ArrayNode matches = answer.putArray("matches");
        for (String name : names) {
            CountingName counting = new CountingName(name);
            matches.add(pattern.matcher(counting).matches());
            reads.add(counting.reads);
        }
        return answer;
    }

    static ObjectNode error(Throwable e) {
        ObjectNode answer = JSON.createObjectNode();
        // StackOverflowError (Java's regex engine recurses on repetitions of groups) carries no message
        answer.put("error", e.getMessage() != null ? e.getMessage()
                : e instanceof StackOverflowError ? "stack overflow (in matching: Java's regex engine recursed too deep)"
                : e.getClass().getName());
        answer.put("exception", e instanceof Failure ? ((Failure) e).type : e.getClass().getName());
        return answer;
    }

    static String string(JsonNode request, String field) {
        JsonNode node = request.get(field);
        if (node == null || !node.isTextual()) {
            throw new IllegalArgumentException("\"" + field + "\" must be a string");
        }
        return node.textValue();
    }

    static String optionalString(JsonNode request, String field) {
        return request.hasNonNull(field) ? string(request, field) : null;
    }

    static List<String> strings(JsonNode request, String field) {
        JsonNode node = request.get(field);
        List<String> values = new ArrayList<>();
        if (node == null || node.isNull()) {
            return values;
        }
        if (!node.isArray()) {
            throw new IllegalArgumentException("\"" + field + "\" must be an array of strings");
        }
        for (JsonNode item : node) {
            if (!item.isTextual()) {
                throw new IllegalArgumentException("\"" + field + "\" must be an array of strings");
            }
            values.add(item.textValue());
        }
        return values;
    }

    /** An error whose message was scrubbed of secrets; keeps the original exception's class name. */
    static final class Failure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String type;

        Failure(String message, Throwable cause) {
            super(message, null, false, false);
            this.type = cause.getClass().getName();
        }
    }
}
