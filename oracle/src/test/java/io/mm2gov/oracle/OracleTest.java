package io.mm2gov.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Known facts of Java and Kafka that the oracle must reproduce, through the same line protocol Python uses. */
class OracleTest {

    private static JsonNode ask(String requestJson) throws IOException {
        return Oracle.JSON.readTree(Oracle.answer(requestJson));
    }

    private static String json(Object value) throws IOException {
        return Oracle.JSON.writeValueAsString(value);
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(item -> out.add(item.textValue()));
        return out;
    }

    @Test
    void regexWorkCountsTheEnginesReads() throws IOException {
        String names = "[" + json("payments.orders") + "," + json("payments." + "a".repeat(100)) + "]";
        JsonNode linear = ask("{\"op\":\"regex_work\",\"regex\":" + json("payments\\..*x") + ",\"names\":" + names + "}");
        JsonNode square = ask("{\"op\":\"regex_work\",\"regex\":" + json("payments\\..*.*x") + ",\"names\":" + names + "}");
        assertFalse(linear.get("matches").get(1).booleanValue());
        assertTrue(square.get("reads").get(1).longValue() > 20 * linear.get("reads").get(1).longValue(),
                "two free repetitions read a failing name quadratically often: " + square);
    }

    @Test
    void backslashIsAnEscapeInPropertiesFiles() throws IOException {
        JsonNode props = ask("{\"op\":\"properties\",\"text\":" + json("topics=payments\\..*\n") + "}").get("properties");
        assertEquals("payments..*", props.get("topics").textValue());
    }

    @Test
    void escapesContinuationsAndLatin1() throws IOException {
        String text = "k\\u0041y=v\\u00e9\nlong=a,\\\n    b\nsp\\ ace\\:x=1\n! comment\nutf8=\u00e9\n";
        JsonNode props = ask("{\"op\":\"properties\",\"text\":" + json(text) + "}").get("properties");
        assertEquals("v\u00e9", props.get("kAy").textValue());
        assertEquals("a,b", props.get("long").textValue());
        assertEquals("1", props.get("sp ace:x").textValue());
        assertEquals("\u00c3\u00a9", props.get("utf8").textValue(), "a file is read as ISO-8859-1");
        JsonNode reader = ask("{\"op\":\"properties\",\"as\":\"reader\",\"text\":" + json(text) + "}").get("properties");
        assertEquals("\u00e9", reader.get("utf8").textValue());
    }

    @Test
    void secretValuesAreNeverEchoed() throws IOException {
        JsonNode answer = ask("{\"op\":\"properties\",\"text\":\"a.sasl.jaas.config=hunter2\\nssl.key.password=hunter3\\n\"}");
        assertTrue(answer.get("properties").get("a.sasl.jaas.config").isNull());
        assertEquals(List.of("a.sasl.jaas.config", "ssl.key.password"), texts(answer.get("redacted")));
        assertFalse(answer.toString().contains("hunter"));
    }

    @Test
    void secretStatusSaysHowNotWhat() {
        assertEquals("unset", Secrets.status(null));
        assertEquals("reference", Secrets.status("${dir:/s:password}"));
        assertEquals("reference", Secrets.status("${dir:/s:user}:${dir:/s:password}"));
        assertEquals("inline", Secrets.status("user:${dir:/s:password}"));
        assertEquals("inline", Secrets.status("hunter2"));
        String module = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" ";
        assertEquals("reference", Secrets.status(module + "password=\"${dir:/s:password}\";"));
        assertEquals("inline", Secrets.status(module + "password=\"hunter2\";"));
        assertEquals("set", Secrets.status("com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;"));
        assertEquals("x [redacted] y", Secrets.scrub("x hunter2 y", java.util.Map.of("a.ssl.key.password", "hunter2")));
    }

    @Test
    void listsSplitOnEveryComma() throws IOException {
        assertEquals(List.of("a", "b", "c"), texts(ask("{\"op\":\"list\",\"value\":\" a, b ,c \"}").get("items")));
        assertEquals(List.of("(x", "y)"), texts(ask("{\"op\":\"list\",\"value\":\"(x,y)\"}").get("items")));
        assertEquals(List.of(), texts(ask("{\"op\":\"list\",\"value\":\"  \"}").get("items")));
        JsonNode empty = ask("{\"op\":\"list\",\"value\":\"a,,b\"}");
        assertEquals(List.of("a", "", "b"), texts(empty.get("items")));
        assertTrue(empty.get("filter_error").textValue().contains("must not be empty"));
        // duplicates: dropped when the filter parses them, an error when the connector config is validated
        JsonNode twice = ask("{\"op\":\"list\",\"value\":\"a,b,a\"}");
        assertEquals(List.of("a", "b"), texts(twice.get("filter_items")));
        assertTrue(twice.get("filter_error").isNull());
        assertTrue(twice.get("validate_errors").get(0).textValue().contains("duplicated"));
    }

    @Test
    void filtersFollowJavaRegex() throws IOException {
        JsonNode answer = ask("{\"op\":\"regex\",\"kind\":\"topic\",\"include\":\"payments..*\",\"exclude\":\"\","
                + "\"names\":[\"payments-eu.secret\",\"payments\",\"x.payments.a\"]}");
        assertEquals(List.of("payments-eu.secret"), texts(answer.get("matches")));
        // (?x): a comment ends at \r in Java, so "b" is part of the pattern
        answer = ask("{\"op\":\"regex\",\"kind\":\"group\",\"include\":" + json("(?x)a#c\rb") + ",\"names\":[\"a\",\"ab\"]}");
        assertEquals(List.of("ab"), texts(answer.get("matches")));
        // \100 after one group: back reference \1 then "00" in Java (octal '@' in Python)
        answer = ask("{\"op\":\"regex\",\"kind\":\"topic\",\"include\":" + json("(a)\\100") + ",\"exclude\":\"\","
                + "\"names\":[\"aa00\",\"a@\"]}");
        assertEquals(List.of("aa00"), texts(answer.get("matches")));
        // the default exclude applies when none is given
        answer = ask("{\"op\":\"regex\",\"kind\":\"topic\",\"include\":\".*\",\"names\":[\"__consumer_offsets\",\"t\"]}");
        assertEquals(List.of("t"), texts(answer.get("matches")));
    }

    @Test
    void errorsAreAnswers() throws IOException {
        JsonNode answer = ask("{\"op\":\"regex\",\"kind\":\"topic\",\"include\":\"(ab\",\"names\":[],\"id\":7}");
        assertTrue(answer.get("error").textValue().startsWith("Unclosed group"), answer.toString());
        assertEquals("java.util.regex.PatternSyntaxException", answer.get("exception").textValue());
        assertEquals(7, answer.get("id").intValue());
        assertTrue(ask("not json").has("error"));
        assertTrue(ask("{\"op\":\"nope\"}").get("error").textValue().contains("unknown op"));
    }

    @Test
    void mm2AnswersPerPairWithoutResolvingProviders() throws IOException {
        String file = String.join("\n",
                "clusters=a,b",
                "config.providers=dir",
                "config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider",
                "a.bootstrap.servers=a:9093",
                "b.bootstrap.servers=b:9093",
                "a.security.protocol=SASL_SSL",
                "a.sasl.mechanism=SCRAM-SHA-512",
                "a.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                        + "username=\"u\" password=\"${dir:/nowhere:password}\";",
                "b.ssl.truststore.password=hunter2",
                "a->b.enabled=true",
                "a->b.topics=pay\\\\..*",
                "a->b.groups=pay-.*",
                "a->b.producer.override.bootstrap.servers=elsewhere:9092",
                "b->a.enabled=false",
                "sync.topic.acls.enabled=false",
                "emit.heartbeats.enabled=false", "");
        String request = "{\"op\":\"mm2\",\"text\":" + json(file)
                + ",\"topics\":[\"pay.x\",\"payroll\",\"b.pay.y\",\"heartbeats\"],\"groups\":[\"pay-1\",\"other\"]}";
        JsonNode answer = ask(request);
        assertFalse(answer.toString().contains("hunter2"), answer.toString());
        assertEquals(List.of("config.providers", "config.providers.dir.class"), texts(answer.get("dropped_keys")));
        JsonNode pairs = answer.get("pairs");
        assertEquals(1, pairs.size(), answer.toString());
        JsonNode pair = pairs.get(0);
        assertEquals("a", pair.get("source").textValue());
        assertTrue(pair.get("enabled").booleanValue());
        // b.pay.y came from b (cycle), heartbeats are replicated whatever the filter says
        assertEquals(List.of("pay.x", "heartbeats"), texts(pair.get("topics")));
        assertEquals(List.of("pay.x"), texts(pair.get("topic_filter")));
        assertEquals("a.pay.x", pair.get("remote_topics").get("pay.x").textValue());
        assertEquals(List.of("pay-1"), texts(pair.get("groups")));
        JsonNode settings = pair.get("settings");
        assertFalse(settings.get("sync.topic.acls.enabled").booleanValue());
        assertTrue(settings.get("emit.checkpoints.enabled").booleanValue());
        assertEquals("a-mm2", settings.get("group.id").textValue());
        JsonNode source = pair.get("clients").get("source_consumer");
        assertEquals("a:9093", source.get("bootstrap.servers").textValue());
        assertEquals("SASL_SSL", source.get("security.protocol").textValue());
        assertEquals("reference", source.get("sasl.jaas.config").textValue());
        JsonNode target = pair.get("clients").get("worker_producer");
        assertEquals("elsewhere:9092", target.get("bootstrap.servers").textValue());
        assertEquals("PLAINTEXT", target.get("security.protocol").textValue());
        assertEquals("inline", target.get("secrets").get("ssl.truststore.password").textValue());
        assertEquals("elsewhere:9092", pair.get("overrides").get("a->b.producer.override.bootstrap.servers").textValue());
        assertEquals(1, pair.get("overrides").size(), "a cluster setting is not an override");
    }
}
