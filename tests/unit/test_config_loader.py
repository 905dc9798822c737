"""Every config problem names file, line and key; all problems of a repo come together."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from governance.config import load_inventory
from governance.config.loader import InvalidConfig
from governance.errors import ConfigError
from tests.conftest import REPO_ROOT, run_cli

ACME = REPO_ROOT / "examples" / "acme"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    target = tmp_path / "repo"
    shutil.copytree(ACME, target)
    return target


def problems_of(repo: Path) -> list[str]:
    with pytest.raises(InvalidConfig) as invalid:
        load_inventory(repo)
    return [str(p) for p in invalid.value.problems]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_acme_loads_with_locations():
    inventory = load_inventory(ACME)
    assert set(inventory.tenants) == {"payments", "marketing", "risk", "logistics", "hr"}
    assert set(inventory.clusters) == {"onprem", "onprem-dr", "cloud"}
    assert inventory.locations["tenants/payments/flows/0/topics/1"] == "tenants/payments.yaml:13"
    assert inventory.locations["clusters/cloud/security"] == "clusters.yaml:20"
    assert [p.name for p in inventory.org_policies] == ["acme_owners.rego"]


def test_unknown_key_names_file_line_and_key(repo):
    edit(repo / "tenants/payments.yaml", "    groups: [\"payments-.*\"]\n    replication_policy",
         "    grups: [\"payments-.*\"]\n    replication_policy")
    assert problems_of(repo) == ["tenants/payments.yaml:14: flows[0].grups: unknown key 'grups'"]


def test_wrong_type_and_missing_key(repo):
    edit(repo / "tenants/marketing.yaml", "classification: internal\n", "")
    edit(repo / "tenants/marketing.yaml", 'owners: ["marketing-data@acme.example"]', "owners: 42")
    found = problems_of(repo)
    assert "tenants/marketing.yaml:2: owners: Input should be a valid list" in found
    assert "tenants/marketing.yaml:1: classification: missing required key 'classification'" in found


def test_duplicate_tenant_name(repo):
    shutil.copy(repo / "tenants/hr.yaml", repo / "tenants/hr-copy.yaml")
    assert problems_of(repo) == [
        "tenants/hr.yaml:2: name: tenant 'hr' is already defined in tenants/hr-copy.yaml"
    ]


def test_unknown_cluster_reference(repo):
    edit(repo / "tenants/marketing.yaml", "target: cloud", "target: clod")
    assert problems_of(repo) == [
        "tenants/marketing.yaml:11: flows[0].target: unknown cluster 'clod' "
        "(clusters.yaml defines: cloud, onprem, onprem-dr)"
    ]


def test_bad_java_regex(repo):
    edit(repo / "tenants/logistics.yaml", 'topics: ["logistics\\\\.shipments"]', 'topics: ["logistics\\\\.\\\\p{L}+"]')
    [problem] = problems_of(repo)
    assert problem.startswith("tenants/logistics.yaml:12: flows[0].topics[0]: regex 'logistics\\.\\p{L}+': ")
    assert "Java-only" in problem


def test_yaml_syntax_error_has_a_line(repo):
    edit(repo / "tenants/hr.yaml", "classification: restricted", "classification: [restricted")
    [problem] = problems_of(repo)
    assert problem.startswith("tenants/hr.yaml:") and "YAML syntax" in problem


def test_duplicate_key_is_reported(repo):
    edit(repo / "tenants/hr.yaml", "classification: restricted", "classification: restricted\nclassification: public")
    assert "tenants/hr.yaml:5: classification: duplicate key 'classification'" in problems_of(repo)


def test_sasl_protocol_needs_a_mechanism(repo):
    edit(repo / "clusters.yaml", "security: {protocol: SASL_SSL, sasl_mechanism: SCRAM-SHA-512, ca_secret: cloud",
         "security: {protocol: SASL_SSL, ca_secret: cloud")
    assert problems_of(repo) == [
        "clusters.yaml:20: clusters.cloud.security: sasl_mechanism is required with protocol SASL_SSL"
    ]


def test_all_problems_are_reported_together(repo):
    edit(repo / "tenants/hr.yaml", "name: hr", "name: hr\ncolour: blue")
    edit(repo / "tenants/risk.yaml", "target: onprem-dr", "target: mars")
    assert len(problems_of(repo)) == 2


def test_not_a_directory_and_missing_clusters(tmp_path):
    with pytest.raises(ConfigError, match="not a directory"):
        load_inventory(tmp_path / "nope")
    assert problems_of(tmp_path) == ["clusters.yaml: missing: a governance repo needs clusters.yaml"]


def test_cli_exit_2_one_line_per_problem_no_traceback(repo):
    edit(repo / "tenants/hr.yaml", "name: hr", "name: hr\ncolour: blue")
    done = run_cli("validate", str(repo))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "tenants/hr.yaml:3: colour: unknown key 'colour'" in done.stderr


def test_schema_command_prints_json_schema():
    import json

    done = run_cli("schema")
    assert done.returncode == 0
    schema = json.loads(done.stdout)
    assert {"ClustersFile", "Tenant", "Flow", "Security"} <= set(schema["$defs"])
    assert schema["$defs"]["Tenant"]["additionalProperties"] is False


def test_unknown_home_cluster(repo):
    edit(repo / "tenants/hr.yaml", "clusters: [onprem]", "clusters: [onprem, mars]")
    assert problems_of(repo) == [
        "tenants/hr.yaml:5: clusters[1]: unknown cluster 'mars' (clusters.yaml defines: cloud, onprem, onprem-dr)"
    ]
