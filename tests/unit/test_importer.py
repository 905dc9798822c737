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
