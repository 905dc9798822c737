"""`mm2gov import` on a seed-style legacy MM2 file: a repo that validates, a warning per unsafe setting."""

from __future__ import annotations

import pytest

from governance.importer import import_properties, parse_properties
from tests.conftest import REPO_ROOT, run_cli

LEGACY = REPO_ROOT / "examples" / "legacy" / "mm2.properties"


def test_properties_parser_handles_continuations_and_separators():
    props = parse_properties("a = 1\nb: two\n# c=3\nd = x \\\n   y\n")
    assert props == {"a": "1", "b": "two", "d": "x y"}


def test_import_maps_clusters_flows_and_warns_without_echoing_secrets():
    imported = import_properties(LEGACY.read_text())
    assert set(imported.clusters["clusters"]) == {"source", "target"}
    [flow] = imported.tenant["flows"]
    assert (flow["source"], flow["target"], flow["topics"]) == ("source", "target", [r"products\..*"])
    text = "\n".join(imported.warnings)
    for expected in ("topics.blacklist: removed in Kafka 4", "groups.blacklist: removed in Kafka 4",
                     "source.sasl.jaas.config: inline secret", "target.sasl.jaas.config: inline secret",
                     "sync.topic.acls.enabled: on", "'.*' mirrors every consumer group",
                     "topic 'products' has no tenant prefix"):
        assert expected in text
    assert "example-inline-s3cret" not in text + repr(imported.clusters) + repr(imported.tenant)


def test_not_an_mm2_file_is_refused():
    with pytest.raises(ValueError, match="no 'clusters=' line"):
        import_properties("bootstrap.servers=x:9092\n")


def test_imported_repo_validates(tmp_path):
    done = run_cli("import", str(LEGACY), "--out", str(tmp_path / "repo"))
    assert done.returncode == 0, done.stderr
    assert "example-inline-s3cret" not in done.stdout + done.stderr
    assert done.stderr.count("warning:") >= 7
    validated = run_cli("validate", str(tmp_path / "repo"))
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_properties_are_read_as_java_reads_them():
    text = ("k\\u0065y = v\\u00e9\n"          # \uXXXX in keys and values
            "multi = one \\\n    two\n"       # a continuation drops the next line's leading blanks
            "trailing = x\\ \n"              # an escaped trailing space is kept
            "re = payments\\\\..*\n"          # '\\' is one backslash
            "raw = payments\\..*\n"           # '\.' is a '.' to Java: the bug this guards
            "a\\=b = c\n")                    # an escaped '=' belongs to the key
    props = parse_properties(text)
    assert props["key"] == "vé"
    assert props["multi"] == "one two"
    assert props["trailing"] == "x "
    assert props["re"] == "payments\\..*"
    assert props["raw"] == "payments..*"
    assert props["a=b"] == "c"


def test_a_legacy_file_is_read_as_iso_8859_1(tmp_path):
    from governance.importer import read_properties_file

    path = tmp_path / "legacy.properties"
    path.write_bytes("clusters = a, b\nnote = caf\xe9\n".encode("iso-8859-1"))
    assert parse_properties(read_properties_file(path))["note"] == "café"


SECRET_LINES = [
    "source.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="u" password="CANARY-1";',
    'target.sasl.jaas.config = org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
    'clientId="c" clientSecret="CANARY-2";',
    "source.ssl.key.password = CANARY-3",
    "SOURCE.SSL.KEYSTORE.PASSWORD = CANARY-4",
    "basic.auth.user.info = user:CANARY-5",
    "target.sasl.oauthbearer.client.credentials.client.secret = CANARY-6",
    "source.ssl_truststore_password = CANARY-7",
    "target.sasl.login.token = CANARY-8",
    "s\\u006furce.ssl.key.password = CANARY-9",
]


@pytest.mark.parametrize("line", SECRET_LINES)
def test_no_secret_like_value_is_echoed_or_written(line):
    imported = import_properties("clusters = source, target\nsource->target.enabled = true\n"
                                 "source->target.topics = orders\\\\..*\n" + line + "\n")
    everything = "\n".join(imported.warnings) + repr(imported.clusters) + repr(imported.tenant)
    assert "CANARY" not in everything
    assert any("inline secret (value not shown)" in w for w in imported.warnings)


# ---- Kafka 3.x keys Kafka 4 removed (KAFKA-17529): translated, or explained ----------------------------------

PAIR_HEAD = "clusters = a, b\na.security.protocol = SSL\nb.security.protocol = SSL\na->b.enabled = true\n" \
            "a->b.topics = pay\\\\..*\n"


@pytest.mark.parametrize(("lines", "expected"), [
    ({}, None),
    ({"topics.blacklist": "t1"}, ("topics.blacklist", "t1")),
    ({"topics.blacklist": "t1", "a->b.topics.blacklist": "p1"}, ("a->b.topics.blacklist", "p1")),
    # 3.x reads the alias only when topics.exclude is unset: a top-level exclude beats a pair-scoped blacklist
    ({"topics.exclude": "e1", "a->b.topics.blacklist": "p1"}, ("topics.exclude", "e1")),
    ({"topics.exclude": "e1", "a->b.topics.exclude": "pe"}, ("a->b.topics.exclude", "pe")),
    ({"b->a.topics.blacklist": "other pair"}, None),
])
def test_legacy_exclude_is_resolved_as_kafka_3_resolves_it(lines, expected):
    from governance.importer import legacy_exclude

    assert legacy_exclude(lines, "a->b", "topics") == expected


def test_blacklists_become_the_flows_excludes_with_a_warning():
    imported = import_properties(PAIR_HEAD + "topics.blacklist = pay\\\\.secret.*, .*[\\-\\.]internal, "
                                 "__consumer_offsets\na->b.groups.blacklist = imported-test.*\n")
    [flow] = imported.tenant["flows"]
    # the documented 3.x default (as a properties file reads it) and names mm2gov excludes anyway are not repeated
    assert (flow["exclude_topics"], flow["exclude_groups"]) == (["pay\\.secret.*"], ["imported-test.*"])
    text = "\n".join(imported.warnings)
    assert "topics.blacklist: removed in Kafka 4 (KAFKA-17529)" in text
    assert "a->b.groups.blacklist: translated for Kafka 4" in text


def test_a_regex_exclude_is_carried_even_when_it_looks_like_a_default():
    """`.*\\.replica` written raw in a properties file reads `.*.replica`, which also excludes `pay.xreplica`:
    mm2gov's `.*\\.replica` does not, so the item is carried rather than taken as held."""
    imported = import_properties(PAIR_HEAD + "topics.blacklist = .*\\.replica\n")
    assert imported.tenant["flows"][0]["exclude_topics"] == [".*.replica"]


def test_an_exclusion_outside_the_grammar_leaves_the_flow_out():
    """Fail closed: without it the flow would replicate topics the legacy MM2 kept back."""
    imported = import_properties(PAIR_HEAD + "topics.exclude = pay\\\\.(?i)secret.*\n")
    assert imported.tenant["flows"] == []
    text = "\n".join(imported.warnings)
    assert "topics.exclude: 'pay\\.(?i)secret.*' cannot be carried into exclude_topics" in text
    assert "a->b: flow left out" in text


def test_other_keys_kafka_4_removed_are_explained():
    imported = import_properties(PAIR_HEAD + "use.incremental.alter.configs = requested\n"
                                 "a->b.add.source.alias.to.metrics = true\nauto.include.jmx.reporter = true\n"
                                 "config.properties.blacklist = min\\\\.insync.*\ntopics.whitelist = x\n")
    text = "\n".join(imported.warnings)
    for expected in ("use.incremental.alter.configs: removed in Kafka 4", "a->b.add.source.alias.to.metrics: "
                     "removed in Kafka 4", "auto.include.jmx.reporter: removed in Kafka 4",
                     "config.properties.blacklist: not imported", "topics.whitelist: not a MirrorMaker 2 key"):
        assert expected in text
    assert "exclude_topics" not in imported.tenant["flows"][0]


def test_imported_excludes_validate_and_generate(tmp_path):
    legacy = tmp_path / "legacy.properties"
    legacy.write_text(PAIR_HEAD + "a.bootstrap.servers = a:9093\nb.bootstrap.servers = b:9093\n"
                      "topics.blacklist = pay\\\\.secret.*\ngroups.blacklist = imported-test.*\n")
    done = run_cli("import", str(legacy), "--out", str(tmp_path / "repo"))
    assert done.returncode == 0, done.stderr
    validated = run_cli("validate", str(tmp_path / "repo"))
    assert validated.returncode == 0, validated.stdout + validated.stderr
    generated = run_cli("generate", str(tmp_path / "repo"), "--out", str(tmp_path / "out"))
    assert generated.returncode == 0, generated.stderr
    [flow] = (tmp_path / "out" / "mm2").glob("*.properties")
    props = parse_properties(flow.read_text())
    assert props["a->b.topics.exclude"].endswith(",pay\\.secret.*")
    assert props["a->b.groups.exclude"] == "console-consumer-.*,connect-.*,__.*,imported-test.*"


# ---- a secret is never echoed, whatever shape the legacy file has (issue 24, class 5) -------------------------

HEAD = "clusters = source, target\nsource->target.enabled = true\n"
JAAS = ('source.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required '
        'username="u" password="CANARY-J";')


@pytest.mark.parametrize("swallower", ["source->target.topics = orders\\\\..*, \\", "topics.blacklist = x, \\",
                                       "clusters = source, target, \\", "note = \\"])
@pytest.mark.parametrize("secret", [JAAS, "source.ssl.key.password = CANARY-P"])
def test_a_secret_line_joined_into_another_key_is_never_echoed(swallower, secret):
    """A trailing `\\` makes Java read the next line, a password, as part of another key's value."""
    text = HEAD + "source->target.topics = orders\\\\..*\n" + swallower + "\n" + secret + "\n"
    try:
        imported = import_properties(text)
    except ValueError as refused:  # the swallowed clusters= line: refused, and the message holds no secret
        assert "CANARY" not in str(refused)
        return
    everything = "\n".join(imported.warnings) + repr(imported.clusters) + repr(imported.tenant)
    assert "CANARY" not in everything
    assert any("inline secret (value not shown)" in w and "ends in '\\'" in w for w in imported.warnings), \
        imported.warnings


def test_an_inline_secret_beside_a_reference_is_warned_and_a_reference_alone_is_not():
    beside = import_properties(HEAD + "source->target.topics = o\\\\..*\n"
                               "source.ssl.key.password = ${file:/s:pw} CANARY-R\n")
    assert any(w.startswith("source.ssl.key.password: inline secret") for w in beside.warnings)
    assert "CANARY" not in "\n".join(beside.warnings) + repr(beside.clusters) + repr(beside.tenant)
    jaas = ('source.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required '
            'username="u" password="${file:/s:pw}";')
    alone = import_properties(HEAD + "source->target.topics = o\\\\..*\n"
                              "source.ssl.key.password = ${file:/s:pw}\n" + jaas + "\n")
    assert not [w for w in alone.warnings if "inline secret" in w], alone.warnings


def test_credentials_in_a_urls_user_info_are_warned_and_never_echoed():
    imported = import_properties(HEAD + "source->target.topics = o\\\\..*\n"
                                 "source.bootstrap.servers = https://app:CANARY-U@broker:9093\n")
    assert any(w.startswith("source.bootstrap.servers: inline secret") for w in imported.warnings)
    assert "CANARY" not in "\n".join(imported.warnings) + repr(imported.clusters) + repr(imported.tenant)


@pytest.mark.parametrize("swallower", ["clusters = source, \\", "source.bootstrap.servers = b:9093, \\"])
def test_migrate_errors_never_echo_a_joined_secret(swallower):
    from governance.errors import ConfigError
    from governance.migrate.live import read_legacy

    text = ("clusters = source, target\nsource.bootstrap.servers = a:9093\ntarget.bootstrap.servers = t:9093\n"
            f"{swallower}\n{JAAS}\n")
    with pytest.raises(ConfigError) as refused:
        read_legacy(text, "source->target", "legacy.properties")
    assert "CANARY" not in str(refused.value)


def test_the_import_cli_echoes_no_joined_secret(tmp_path):
    legacy = tmp_path / "legacy.properties"
    legacy.write_text(HEAD + "source->target.topics = orders\\\\..*, \\\n" + JAAS + "\n")
    done = run_cli("import", str(legacy), timeout=60)
    assert done.returncode == 0, done.stderr
    assert "CANARY" not in done.stdout + done.stderr
    assert "inline secret (value not shown)" in done.stderr
