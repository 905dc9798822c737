"""The Java oracle reproduces known facts of java.util.Properties, Kafka's LIST type, Java regex and MM2 4.x.

Every expectation here is a fact stated independently (Java's and Kafka's documented behaviour, the
example repo's clusters and tenant scopes), so a wrong oracle fails; where Python behaves differently
the test says so by asking Python too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from devstack.oracle import JavaOracle, OracleError
from tests.conftest import REPO_ROOT, run_cli

pytestmark = pytest.mark.integration

ACME = REPO_ROOT / "examples" / "acme"


def mm2_file(*lines: str) -> str:
    """A small dedicated-mode MM2 file with clusters a and b."""
    return "\n".join(["clusters=a,b", "a.bootstrap.servers=a:9093", "b.bootstrap.servers=b:9093", *lines]) + "\n"


# -- java.util.Properties (FIELD.md pitfall 9) ------------------------------------------------------

def test_a_raw_backslash_is_an_escape_so_the_dot_matches_anything(java_oracle: JavaOracle) -> None:
    read = java_oracle.properties("topics=payments\\..*\n").properties["topics"]
    assert read == "payments..*"
    names = ["payments-eu.secret", "payments.orders"]
    assert java_oracle.matches(read, names) == names
    escaped = java_oracle.properties("topics=payments\\\\..*\n").properties["topics"]
    assert escaped == "payments\\..*"
    assert java_oracle.matches(escaped, names) == ["payments.orders"]


def test_a_newline_or_carriage_return_in_a_value_starts_a_new_key(java_oracle: JavaOracle) -> None:
    value = "payments-.*\nsync.topic.acls.enabled=true"
    assert java_oracle.properties(f"groups={value}\n").properties == {
        "groups": "payments-.*", "sync.topic.acls.enabled": "true"}
    assert java_oracle.properties("a=1\rb=2\r\nc=3").properties == {"a": "1", "b": "2", "c": "3"}


def test_unicode_escapes_and_continuations_in_keys_and_values(java_oracle: JavaOracle) -> None:
    text = "k\\u0041y=v\\u00e9\\u4e2d\nlo\\\n   ng=first,\\\n      second\nsp\\ ace\\:x\\=y=1\n"
    assert java_oracle.properties(text).properties == {
        "kAy": "v\u00e9\u4e2d", "long": "first,second", "sp ace:x=y": "1"}


def test_separators_comments_and_whitespace(java_oracle: JavaOracle) -> None:
    text = "# comment=1\n  ! also a comment\na:1\nb 2\nc   =   3  \n\\#d=4\ne\nf=\\\n"
    assert java_oracle.properties(text).properties == {
        "a": "1", "b": "2", "c": "3  ", "#d": "4", "e": "", "f": ""}


def test_a_file_is_read_as_iso_8859_1(java_oracle: JavaOracle, tmp_path: Path) -> None:
    path = tmp_path / "mm2.properties"
    path.write_bytes("t=\u00e9\n".encode())  # UTF-8 on disk, as Python writes it
    assert java_oracle.properties(path=path).properties == {"t": "\u00c3\u00a9"}
    assert java_oracle.properties("t=\u00e9\n").properties == {"t": "\u00c3\u00a9"}  # text "as file"
    assert java_oracle.properties("t=\u00e9\n", as_="reader").properties == {"t": "\u00e9"}


def test_secret_values_are_never_echoed(java_oracle: JavaOracle) -> None:
    answer = java_oracle.request({"op": "properties", "text": (
        "a.sasl.jaas.config=x password=\"hunter2\";\nssl.key.password=hunter3\nbasic.auth.user.info=u:hunter4\n"
        "topics=t\n")})
    assert answer["properties"] == {"a.sasl.jaas.config": None, "ssl.key.password": None,
                                    "basic.auth.user.info": None, "topics": "t"}
    assert "hunter" not in json.dumps(answer)


# -- Kafka's LIST type (pitfall 10) --------------------------------------------------------------

def test_list_items_are_trimmed_and_split_on_every_comma(java_oracle: JavaOracle) -> None:
    assert java_oracle.list_items("a, b ,c").items == ("a", "b", "c")
    assert java_oracle.list_items("  a  ").items == ("a",)
    assert java_oracle.list_items("pay(x,y)").items == ("pay(x", "y)")
    assert java_oracle.list_items("a{1,3}").items == ("a{1", "3}")
    assert java_oracle.list_items("").items == ()


def test_kafka_4_rejects_empty_filter_items_and_drops_or_rejects_duplicates(java_oracle: JavaOracle) -> None:
    fine = java_oracle.list_items("a,b")
    assert (fine.filter_items, fine.filter_error, fine.validate_errors) == (("a", "b"), None, ())
    for value in ("a,,b", "a,"):
        empty = java_oracle.list_items(value)
        assert empty.filter_items is None and "must not be empty" in (empty.filter_error or "")
    with pytest.raises(OracleError, match="must not be empty"):
        java_oracle.matches("t,", ["t"])
    # a duplicate is dropped (with a warning) when the filter parses the list...
    twice = java_oracle.list_items("a, b, a")
    assert (twice.items, twice.filter_items, twice.filter_error) == (("a", "b", "a"), ("a", "b"), None)
    assert java_oracle.matches("t,t", ["t"]) == ["t"]
    # ...but Connector.validate rejects it, so the herder never creates the connector
    assert any("must not be duplicated" in error for error in twice.validate_errors)
    pair = java_oracle.mm2(mm2_file("a->b.enabled=true", "a->b.topics=t,t"), ["t"]).pair("a", "b")
    assert pair.topic_filter == ("t",)
    assert "must not be duplicated" in pair.connector_errors["MirrorSourceConnector"]["topics"][0]
    assert not pair.connector_runs("MirrorSourceConnector")


def test_list_items_are_joined_as_alternatives(java_oracle: JavaOracle) -> None:
    # "pay(x,y)" is two items, "pay(x" and "y)", compiled as "pay(x|y)": a different regex that still compiles
    assert java_oracle.matches("pay(x,y)", ["payx", "payy", "pay(x,y)", "y"]) == ["payx", "payy"]
    # "a{1,3}" becomes "a{1|3}": not a regex at all
    with pytest.raises(OracleError) as error:
        java_oracle.matches("a{1,3}", ["a"])
    assert error.value.exception == "java.util.regex.PatternSyntaxException"


# -- Java regex, as MM2's filters compile it (pitfall 11) ------------------------------------------

def test_filters_match_whole_names(java_oracle: JavaOracle) -> None:
    assert java_oracle.matches("payments", ["payments", "payments.x", "xpayments"]) == ["payments"]


def test_extended_mode_comment_ends_at_carriage_return_in_java_only(java_oracle: JavaOracle) -> None:
    pattern = "(?x)pay # comment\rments"
    assert java_oracle.matches(pattern, ["pay", "payments"]) == ["payments"]
    assert re.fullmatch(pattern, "pay") and not re.fullmatch(pattern, "payments")  # Python: comment runs to \n


def test_extended_mode_comment_ends_at_unicode_line_separators_which_stay_literal(java_oracle: JavaOracle) -> None:
    for separator in ("\u0085", "\u2028", "\u2029"):
        pattern = f"(?x)pay#c{separator}ments"
        # Java ends the comment there but, unlike \n and \r, does not skip the separator as whitespace
        assert java_oracle.matches(pattern, ["pay", "payments", f"pay{separator}ments"]) == [f"pay{separator}ments"]
        assert re.fullmatch(pattern, "pay")  # Python: the comment runs on to the end


def test_extended_mode_ignores_whitespace_in_classes_in_java_only(java_oracle: JavaOracle) -> None:
    assert java_oracle.matches("(?x)a[b c]", ["ab", "ac", "a "]) == ["ab", "ac"]
    assert re.fullmatch("(?x)a[b c]", "a ")  # Python keeps the space in the class


def test_backreference_versus_octal(java_oracle: JavaOracle) -> None:
    assert java_oracle.matches(r"(a)\1", ["aa", "a\x01"]) == ["aa"]
    # Java: \1 is a back reference, then "00"; Python: \100 is octal '@'
    assert java_oracle.matches(r"(a)\100", ["aa00", "a@"]) == ["aa00"]
    assert re.fullmatch(r"(a)\100", "a@")
    assert java_oracle.matches(r"\0100", ["@"]) == ["@"]  # Java's octal needs a leading 0


def test_invalid_regex_is_an_error_with_javas_message_and_the_oracle_goes_on(java_oracle: JavaOracle) -> None:
    with pytest.raises(OracleError) as error:
        java_oracle.matches("payments(", ["payments"])
    assert str(error.value).startswith("Unclosed group near index 9")
    assert error.value.exception == "java.util.regex.PatternSyntaxException"
    assert java_oracle.matches("payments", ["payments"]) == ["payments"]


def test_default_excludes_apply_when_none_is_given(java_oracle: JavaOracle) -> None:
    topics = ["__consumer_offsets", "mm2-offsets.a.internal", "orders.replica", "orders"]
    assert java_oracle.matches(".*", topics, exclude=None) == ["orders"]
    assert java_oracle.matches(".*", topics) == topics  # exclude "" excludes nothing
    groups = ["console-consumer-42", "connect-mm2", "__x", "app"]
    assert java_oracle.matches(".*", groups, kind="group", exclude=None) == ["app"]


def test_many_checks_in_one_round_trip(java_oracle: JavaOracle) -> None:
    queries = [(f"t{i}\\..*", [f"t{i}.x", f"t{i + 1}.x", f"t{i}x"]) for i in range(500)]
    assert java_oracle.matches_many(queries) == [[f"t{i}.x"] for i in range(500)]


# -- MirrorMakerConfig and the connectors --------------------------------------------------------

def test_pairs_are_off_unless_enabled_and_heartbeat_herders_exist(java_oracle: JavaOracle) -> None:
    answer = java_oracle.mm2(mm2_file("a->b.enabled=true"), ["t"])
    assert [(p.source, p.target, p.enabled) for p in answer.pairs] == [("a", "b", True), ("b", "a", False)]
    assert answer.pair("b", "a").topics is None
    answer = java_oracle.mm2(mm2_file("a->b.enabled=true", "emit.heartbeats.enabled=false"), ["t"])
    assert [(p.source, p.target) for p in answer.pairs] == [("a", "b")]


def test_pair_settings_override_top_level_ones(java_oracle: JavaOracle) -> None:
    pair = java_oracle.mm2(mm2_file("a->b.enabled=true", "topics=.*", "a->b.topics=pay\\\\..*", "groups=.*",
                                    "a->b.groups=pay-.*", "emit.heartbeats.enabled=false"),
                           ["pay.x", "payroll", "risk.y"], ["pay-1", "risk-1"]).pair("a", "b")
    assert pair.topics == ("pay.x",)
    assert pair.remote_topics == {"pay.x": "a.pay.x"}
    assert pair.groups == ("pay-1",)
    assert pair.settings["topics"] == ["pay\\..*"]


def test_defaults_replicate_everything_and_sync_acls(java_oracle: JavaOracle) -> None:
    pair = java_oracle.mm2(mm2_file("a->b.enabled=true"), ["anything", "b.t", "__consumer_offsets"],
                           ["g", "connect-x"]).pair("a", "b")
    assert pair.topics == ("anything",)  # b.t came from b (cycle), __* excluded by default
    assert pair.groups == ("g",)
    assert pair.settings["sync.topic.acls.enabled"] is True  # pitfall 1
    assert pair.settings["offset-syncs.topic.location"] == "source"  # pitfall 4
    assert pair.settings["group.id"] == "a-mm2"
    assert pair.settings["config.storage.topic"] == "mm2-configs.a.internal"
    assert pair.source_client.security_protocol == "PLAINTEXT"


def test_heartbeat_topics_are_replicated_whatever_the_filter_says(java_oracle: JavaOracle) -> None:
    names = ["pay.x", "heartbeats", "risk.heartbeats", "c.heartbeats"]
    pair = java_oracle.mm2(mm2_file("a->b.enabled=true", "a->b.topics=pay\\\\..*"), names).pair("a", "b")
    assert pair.topic_filter == ("pay.x",)
    assert pair.topics == ("pay.x", "heartbeats", "risk.heartbeats", "c.heartbeats")
    off = java_oracle.mm2(mm2_file("a->b.enabled=true", "a->b.topics=pay\\\\..*",
                                   "heartbeats.replication.enabled=false"), names).pair("a", "b")
    assert off.topics == ("pay.x",)


def test_identity_policy_keeps_names_and_has_no_cycle_detection(java_oracle: JavaOracle) -> None:
    pair = java_oracle.mm2(mm2_file(
        "a->b.enabled=true", "replication.policy.class=org.apache.kafka.connect.mirror.IdentityReplicationPolicy"),
        ["t", "b.t"]).pair("a", "b")
    assert pair.topics == ("t", "b.t")
    assert pair.remote_topics == {"t": "t", "b.t": "b.t"}


def test_removed_blacklist_keys_are_ignored_by_kafka_4(java_oracle: JavaOracle) -> None:
    pair = java_oracle.mm2(mm2_file("a->b.enabled=true", "a->b.topics.blacklist=secret.*"),
                           ["secret.x", "t"]).pair("a", "b")
    assert pair.topics == ("secret.x", "t")


def test_client_overrides_change_where_and_as_whom_mm2_connects(java_oracle: JavaOracle) -> None:
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="x" password="p4ssw0rd";'
    text = mm2_file(
        "a->b.enabled=true", "a->b.source.consumer.bootstrap.servers=evil:9092",
        "a->b.producer.override.security.protocol=SASL_PLAINTEXT",
        "a->b.producer.override.sasl.mechanism=PLAIN", f"a->b.producer.override.sasl.jaas.config={jaas}")
    assert "p4ssw0rd" not in json.dumps(java_oracle.request({"op": "mm2", "text": text}))
    pair = java_oracle.mm2(text).pair("a", "b")
    assert pair.source_client.bootstrap_servers == "evil:9092"
    assert pair.clients["source_admin"].bootstrap_servers == "a:9093"
    assert (pair.target_client.bootstrap_servers, pair.target_client.security_protocol,
            pair.target_client.sasl_mechanism, pair.target_client.sasl_jaas_config) == (
        "b:9093", "SASL_PLAINTEXT", "PLAIN", "inline")
    assert pair.overrides == {
        "a->b.producer.override.sasl.jaas.config": "[redacted]",
        "a->b.producer.override.sasl.mechanism": "PLAIN",
        "a->b.producer.override.security.protocol": "SASL_PLAINTEXT",
        "a->b.source.consumer.bootstrap.servers": "evil:9092",
    }


def test_config_providers_are_not_resolved_and_errors_hide_secrets(java_oracle: JavaOracle) -> None:
    answer = java_oracle.mm2(mm2_file(
        "config.providers=file",
        "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider",
        "a->b.config.providers=env", "a->b.enabled=true",
        "a.sasl.jaas.config=${file:/etc/passwd:root}"))
    assert answer.dropped_keys == ("a->b.config.providers", "config.providers", "config.providers.file.class")
    assert answer.pair("a", "b").source_client.sasl_jaas_config == "reference"
    # Kafka quotes rejected values in its messages; the oracle scrubs any that is also a secret's value
    pair = java_oracle.mm2(mm2_file("a->b.enabled=maybe", "b.ssl.key.password=maybe")).pair("a", "b")
    assert pair.error and "maybe" not in pair.error and "[redacted]" in pair.error
    with pytest.raises(OracleError) as error:
        java_oracle.mm2(mm2_file("security.protocol=maybe", "b.ssl.key.password=maybe"))
    assert "maybe" not in str(error.value) and "[redacted]" in str(error.value)


# The shape `mm2gov generate` writes (examples/acme, payments' flow onprem -> cloud), trimmed to what matters here.
GENERATED_STYLE = r"""# MirrorMaker 2 for tenant payments, flow payments-onprem-to-cloud: onprem -> cloud
clusters=onprem,cloud
config.providers=dir
config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
config.providers.dir.param.allowed.paths=/etc/mm2gov/secrets
onprem.bootstrap.servers=127.0.0.1\:19093
cloud.bootstrap.servers=127.0.0.1\:29093
onprem.security.protocol=SASL_SSL
onprem.sasl.mechanism=SCRAM-SHA-512
onprem.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username\="mm2-payments" \
    password\="${dir\:/etc/mm2gov/secrets/scram-onprem-mm2-payments\:password}";
cloud.security.protocol=SASL_SSL
cloud.sasl.mechanism=SCRAM-SHA-512
cloud.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username\="mm2-payments" \
    password\="${dir\:/etc/mm2gov/secrets/scram-cloud-mm2-payments\:password}";
onprem->cloud.enabled=true
cloud->onprem.enabled=false
onprem->cloud.topics=payments\\.orders.*,payments\\.refunds,payments\\.public\\..*
onprem->cloud.topics.exclude=.*[\\-\\.]internal,.*\\.replica,__.*,mm2gov\\..*
onprem->cloud.groups=payments-.*
replication.policy.class=org.apache.kafka.connect.mirror.DefaultReplicationPolicy
cloud.group.id=mm2gov.payments-onprem-to-cloud.connect
cloud.config.storage.topic=mm2gov.payments-onprem-to-cloud.configs
sync.topic.acls.enabled=false
emit.checkpoints.enabled=false
sync.group.offsets.enabled=false
emit.heartbeats.enabled=false
emit.offset-syncs.enabled=false
"""
PAYMENTS_INSIDE = ["payments.orders", "payments.orders-eu", "payments.refunds", "payments.public.prices"]
PAYMENTS_OUTSIDE = ["payments-eu.secret", "paymentsXorders", "payments.refunds.raw", "payments.private.x",
                    "payments.orders.internal", "payments.orders.replica", "risk.orders", "cloud.payments.orders"]


def test_generated_style_file(java_oracle: JavaOracle) -> None:
    answer = java_oracle.mm2(GENERATED_STYLE, PAYMENTS_INSIDE + PAYMENTS_OUTSIDE, ["payments-app", "risk-app"])
    assert answer.dropped_keys == (
        "config.providers", "config.providers.dir.class", "config.providers.dir.param.allowed.paths")
    assert [(p.source, p.target, p.enabled) for p in answer.pairs] == [("onprem", "cloud", True)]
    pair = answer.pair("onprem", "cloud")
    assert pair.topics == tuple(PAYMENTS_INSIDE)
    assert pair.remote_topics == {t: f"onprem.{t}" for t in PAYMENTS_INSIDE}
    assert pair.groups == ("payments-app",)
    assert pair.settings["topics"] == ["payments\\.orders.*", "payments\\.refunds", "payments\\.public\\..*"]
    assert (pair.settings["sync.topic.acls.enabled"], pair.settings["emit.offset-syncs.enabled"]) == (False, False)
    worker = [pair.settings[key] for key in ("group.id", "config.storage.topic", "offset.storage.topic")]
    assert worker == ["mm2gov.payments-onprem-to-cloud.connect", "mm2gov.payments-onprem-to-cloud.configs",
                      "mm2-offsets.onprem.internal"]  # the last one not set by the file: MM2's default
    assert pair.source_client == pair.clients["source_admin"]
    assert (pair.source_client.bootstrap_servers, pair.target_client.bootstrap_servers) == (
        "127.0.0.1:19093", "127.0.0.1:29093")
    for client in pair.clients.values():
        assert (client.security_protocol, client.sasl_mechanism, client.sasl_jaas_config) == (
            "SASL_SSL", "SCRAM-SHA-512", "reference")
    # with checkpoints and offset syncs off, Kafka refuses the checkpoint connector: no group is ever synced
    assert pair.connector_runs("MirrorSourceConnector")
    assert not pair.connector_runs("MirrorCheckpointConnector")
    assert set(pair.connector_errors["MirrorCheckpointConnector"]) == {"emit.checkpoints.enabled",
                                                                       "emit.offset-syncs.enabled"}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    done = run_cli("generate", str(ACME), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_generated_flow_replicates_exactly_the_tenant_scope(java_oracle: JavaOracle, generated: Path) -> None:
    path = generated / "mm2" / "payments-onprem-to-cloud.properties"
    text = path.read_text()
    clusters = yaml.safe_load((ACME / "clusters.yaml").read_text())["clusters"]
    # payments' flow onprem -> cloud in examples/acme: payments\.orders.*, payments\.refunds, payments\.public\..*
    inside, outside = PAYMENTS_INSIDE, PAYMENTS_OUTSIDE
    groups = ["payments-app", "payments-analytics", "risk-app"]
    answer = java_oracle.mm2(path=path, topics=inside + outside, groups=groups)

    assert answer.clusters == ("cloud", "onprem")
    assert "config.providers" in answer.dropped_keys
    assert [(p.source, p.target) for p in answer.enabled_pairs] == [("onprem", "cloud")]
    pair = answer.pair("onprem", "cloud")
    assert pair.topic_filter == tuple(inside)
    assert set(pair.topics or ()) == set(inside)
    assert pair.remote_topics == {t: f"onprem.{t}" for t in inside}
    assert pair.groups == ("payments-app", "payments-analytics")
    assert pair.settings["sync.topic.acls.enabled"] is False
    assert pair.connector_errors["MirrorSourceConnector"] == {}
    group_id = re.search(r"^cloud\.group\.id=(.*)$", text, re.M)
    assert group_id and pair.settings["group.id"] == group_id.group(1) != "onprem-mm2"
    for client, cluster in ((pair.source_client, "onprem"), (pair.target_client, "cloud")):
        assert client.bootstrap_servers == clusters[cluster]["bootstrap_servers"]
        assert client.security_protocol == clusters[cluster]["security"]["protocol"]
        assert client.sasl_mechanism == clusters[cluster]["security"]["sasl_mechanism"]
        assert client.sasl_jaas_config == "reference"
    assert pair.overrides == {}


def test_every_generated_flow_is_one_enabled_pair(java_oracle: JavaOracle, generated: Path) -> None:
    files = sorted((generated / "mm2").glob("*.properties"))
    assert files
    for path in files:
        answer = java_oracle.mm2(path=path, topics=["__consumer_offsets"])
        enabled = answer.enabled_pairs
        assert len(enabled) == 1, path.name
        assert enabled[0].topics == (), path.name
        assert enabled[0].settings["sync.topic.acls.enabled"] is False, path.name
