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
