"""The audit's pure parts, without Spark: tenancy rows from a governance repo, the check catalog."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from governance.compile.acls import (
    MM2_SOURCE_TOPIC_OPS,
    MM2_TARGET_REMOTE_OPS,
    MM2_TRANSACTIONAL_OPS,
    mm2_internal_prefix,
)
from governance.model.names import connect_names, flow_id, mm2_flow_topics, mm2_principal, mm2_transactional_ids
from governance.resources import AUDITS_ENV, audits_dir
from spark_audit.catalog import KEYS, catalog, load_meta, meta
from spark_audit.findings import COLUMNS
from spark_audit.model import SNAPSHOT_SCHEMAS, TENANCY_SCHEMAS, Snapshot, acl_row
from spark_audit.tenancy import (
    FlowRow,
    GrantRow,
    MarkerRow,
    Mm2TopicRow,
    PrincipalRow,
    QuotaRow,
    TenantPrefix,
    tenancy_rows,
)
from tests.conftest import REPO_ROOT
from tests.tools.capacity import CAPACITY_YAML, FLOW, PAYMENTS_CAPACITY, acme_with
from tests.tools.decided import decided, decided_example

ACME = REPO_ROOT / "examples" / "acme"
RISK_DR = flow_id("risk", "onprem", "onprem-dr")  # the model's names, e.g. '-' of onprem-dr encoded
PAYMENTS_DR = flow_id("payments", "onprem", "onprem-dr")


@pytest.fixture(scope="module")
def acme() -> dict[str, list[tuple]]:
    inventory, tenancy = decided_example(ACME)
    return tenancy_rows(tenancy, inventory.clusters)


def test_every_table_matches_its_schema(acme):
    assert set(acme) == set(TENANCY_SCHEMAS)
    for table, rows in acme.items():
        assert rows or table == "quotas", table  # examples/acme sizes no flow and declares no principal quota
        assert all(len(row) == len(TENANCY_SCHEMAS[table].fields) for row in rows), table


def test_quotas_are_the_repos_per_cluster_principal_and_key(tmp_path):
    """The sized flow's MM2: its fetch quota on the source, its produce quota on the target (compile/quotas.py)."""
    inventory, tenancy = decided(acme_with(tmp_path, CAPACITY_YAML, PAYMENTS_CAPACITY))
    assert tenancy_rows(tenancy, inventory.clusters)["quotas"] == [
        QuotaRow("payments", mm2_principal(FLOW), "cloud", "producer_byte_rate", 8333334.0),
        QuotaRow("payments", mm2_principal(FLOW), "onprem", "consumer_byte_rate", 25000000.0)]


def test_prefixes_own_remote_and_internal(acme):
    payments = {row for row in acme["tenant_prefixes"] if row.tenant == "payments"}
    assert TenantPrefix("payments", "topic", "payments.", None, "own", None) in payments
    assert TenantPrefix("payments", "group", "payments-", None, "own", None) in payments
    assert TenantPrefix("payments", "topic", "onprem.payments.", "cloud", "remote",
                        "payments-onprem-to-cloud") in payments
    assert TenantPrefix("payments", "topic", "onprem.payments.", "onprem-dr", "remote", PAYMENTS_DR) in payments
    for kind in ("topic", "group"):
        assert TenantPrefix("payments", kind, "mm2gov.payments-onprem-to-cloud.", "cloud", "internal",
                            "payments-onprem-to-cloud") in payments
    logistics = {row for row in acme["tenant_prefixes"] if row.tenant == "logistics" and row.origin == "remote"}
    assert logistics == {TenantPrefix("logistics", "topic", "logistics.", "cloud", "remote",
                                      "logistics-onprem-to-cloud")}  # identity policy keeps the name


def test_principals_flows_markers(acme):
    assert PrincipalRow("payments", "User:payments-analytics", "tenant", None, ("read",)) in acme["principals"]
    assert PrincipalRow("risk", mm2_principal(RISK_DR), "mm2", RISK_DR, ()) in acme["principals"]
    assert FlowRow("logistics", "logistics-onprem-to-cloud", "onprem", "cloud", "identity",
                   ("logistics\\.shipments",), ("logistics-.*",), (), ()) in acme["flows"]
    assert acme["markers"] == [MarkerRow("marketing", "lob", "marketing"), MarkerRow("payments", "lob", "payments"),
                               MarkerRow("risk", "lob", "risk")]
    assert {row.cluster for row in acme["clusters"]} == {"onprem", "onprem-dr", "cloud"}


def test_grants_cover_the_granted_names_where_flows_copy_them(acme):
    assert acme["grants"] == [
        GrantRow("payments", "marketing", "onprem.payments.public.", ("read",), "cloud"),
        GrantRow("payments", "marketing", "onprem.payments.public.", ("read",), "onprem-dr"),
        GrantRow("payments", "marketing", "payments.public.", ("read",), None),
    ]


def test_mm2_scopes_follow_compile(acme):
    scopes = {(r.principal, r.cluster, r.resource_type, r.prefix): r.operations for r in acme["mm2_scopes"]}
    principal = "User:mm2-payments-onprem-to-cloud"
    assert scopes[(principal, "onprem", "TOPIC", "payments.")] == tuple(sorted(MM2_SOURCE_TOPIC_OPS))
    assert scopes[(principal, "cloud", "TOPIC", "onprem.payments.")] == tuple(sorted(MM2_TARGET_REMOTE_OPS))
    assert not any(resource_type == "CLUSTER" for _, _, resource_type, _ in scopes)  # never on the cluster
    assert not any(cluster == "onprem-dr" for p, cluster, *_ in scopes if p == principal)
    # compile's pattern types: a prefix ending with a separator is PREFIXED, any other name LITERAL
    patterns = {(r.principal, r.cluster, r.resource_type, r.prefix): r.pattern_type for r in acme["mm2_scopes"]}
    flow = "payments-onprem-to-cloud"
    assert patterns[(principal, "cloud", "TOPIC", mm2_internal_prefix(flow))] == "PREFIXED"
    assert set(patterns.values()) <= {"PREFIXED", "LITERAL"}


def test_an_exactly_once_flow_scopes_its_own_transactional_ids(tmp_path: Path):
    """compile's TRANSACTIONAL_ID entries for an exactly-once flow, with the pattern type compile grants
    them with: the tasks' prefix PREFIXED, the Connect leader's id LITERAL; none for the other flows."""
    repo = tmp_path / "acme"
    shutil.copytree(ACME, repo)
    payments = repo / "tenants" / "payments.yaml"
    default = "    replication_policy: default\n"
    payments.write_text(payments.read_text().replace(default, f"{default}    delivery: exactly_once\n", 1))
    inventory, tenancy = decided(repo)
    rows = tenancy_rows(tenancy, inventory.clusters)
    flow = "payments-onprem-to-cloud"
    ids = mm2_transactional_ids(flow)
    transactional = {(r.flow_id, r.cluster, r.prefix, r.pattern_type, r.operations) for r in rows["mm2_scopes"]
                     if r.resource_type == "TRANSACTIONAL_ID"}
    ops = tuple(sorted(MM2_TRANSACTIONAL_OPS))
    assert transactional == {(flow, "cloud", ids.tasks, "PREFIXED", ops), (flow, "cloud", ids.leader, "LITERAL", ops)}


def test_each_flows_own_mm2_topics_are_named_by_names_py(acme):
    """mm2_topics: the flow's offset-syncs, checkpoints, heartbeats and Connect topics, on its target only."""
    flow = "payments-onprem-to-cloud"
    topics, connect = mm2_flow_topics(flow), connect_names(flow)
    mine = {row for row in acme["mm2_topics"] if row.flow_id == flow}
    assert mine == {Mm2TopicRow("payments", flow, "cloud", name, role) for role, name in (
        ("offset_syncs", topics.offset_syncs), ("checkpoints", topics.checkpoints),
        ("heartbeats", topics.heartbeats), ("configs", connect.configs), ("offsets", connect.offsets),
        ("status", connect.status))}
    assert len({row.topic for row in acme["mm2_topics"]}) == len(acme["mm2_topics"])  # no two flows share one
    flows = {(row.flow_id, row.target) for row in acme["flows"]}
    assert {(row.flow_id, row.cluster) for row in acme["mm2_topics"]} == flows


@pytest.mark.parametrize("repo", ["grant_write", "grant_wildcard", "grant_outside_scope", "grant_unknown_tenant"])
def test_invalid_grants_excuse_nothing(repo):
    inventory, tenancy = decided_example(REPO_ROOT / "examples" / "bad" / repo)
    assert tenancy_rows(tenancy, inventory.clusters)["grants"] == []


def test_acl_row_takes_the_contract_shape():
    binding = {"principal": "User:a", "host": "*", "resource_type": "TOPIC", "resource_name": "a.",
               "pattern_type": "PREFIXED", "operation": "READ", "permission": "ALLOW"}
    row = acl_row("c", binding)
    assert dict(zip(SNAPSHOT_SCHEMAS["acls"].fieldNames(), row, strict=True)) == {"cluster": "c", **binding}


def test_catalog_rejects_bad_entries(tmp_path: Path):
    good = yaml.safe_load((audits_dir() / "acl_stale" / "metadata.yaml").read_text())
    folder = tmp_path / "acl_stale"
    folder.mkdir()
    for broken, error in [({**good, "severity": "urgent"}, "severity"), ({**good, "id": "OTHER"}, "folder"),
                          ({k: v for k, v in good.items() if k != "rationale"}, "expected keys"),
                          ({**good, "catches": []}, "catches")]:
        (folder / "metadata.yaml").write_text(yaml.safe_dump(broken))
        with pytest.raises(ValueError, match=error):
            load_meta(folder)
    (folder / "metadata.yaml").write_text(yaml.safe_dump(good))
    assert load_meta(folder) == catalog()["ACL_STALE"]
    assert KEYS == ("id", "title", "severity", "rationale", "remediation", "catches")
    (tmp_path / "acl_wildcard").mkdir()  # a check's folder without its metadata
    with pytest.raises(ValueError, match=r"acl_wildcard: a check's folder without its metadata\.yaml"):
        catalog(tmp_path)


def test_the_catalog_is_read_from_audits_or_from_its_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """audits/ (the editable install maps the package's data onto the checkout), or $MM2GOV_AUDITS."""
    monkeypatch.delenv(AUDITS_ENV, raising=False)
    assert audits_dir() == Path(__file__).resolve().parents[2] / "audits"
    (tmp_path / "acl_stale").mkdir()
    text = (audits_dir() / "acl_stale" / "metadata.yaml").read_text()
    (tmp_path / "acl_stale" / "metadata.yaml").write_text(text.replace("severity: medium", "severity: low"))
    monkeypatch.setenv(AUDITS_ENV, str(tmp_path))
    assert list(catalog()) == ["ACL_STALE"] and meta("ACL_STALE").severity == "low"
    monkeypatch.delenv(AUDITS_ENV)
    assert meta("ACL_STALE").severity == "medium" and len(catalog()) > 1


def test_findings_columns_are_the_contract_keys():
    assert COLUMNS == ("check_id", "severity", "tenant", "cluster", "resource_type", "resource_name", "principal",
                       "message", "remediation", "evidence")


def test_partial_names_whole_clusters_or_single_tables():
    snapshot = Snapshot(*([None] * 7), partial=("dr", "cloud:records", "onprem:acls"))  # type: ignore[arg-type]
    assert snapshot.partial_clusters("records") == ["cloud", "dr"]
    assert snapshot.partial_clusters("acls") == ["dr", "onprem"]
