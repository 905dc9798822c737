"""The audit detectors, checkov-style: per check a PASSED snapshot (examples/acme deployed as
mm2gov generates it: no finding) and a FAILED one (the same plus planted leaks: exactly the
expected findings). The PASSED snapshot is the FAILED one with the leaks removed, so each
test also shows that removing the leak removes the finding.

Each check's leaks are declared next to its test in LEAKS; the module fixture `failed` runs
every check on its leaky snapshot at once (a few threads: a Spark query on tiny data is mostly
driver latency, which overlaps), and the tests assert on the results.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from governance.compile.acls import pattern_type
from governance.config import load_inventory
from governance.model.names import (
    flow_id,
    mm2_flow_topics,
    mm2_internal_prefix,
    mm2_principal,
    mm2_transactional_ids,
)
from spark_audit.catalog import SEVERITIES, meta
from spark_audit.checks import CHECKS, REACH_CHECKS
from spark_audit.checks.common import DATA_SEVERITY
from spark_audit.evidence import REACH, REACH_UNKNOWN, reach_of
from spark_audit.findings import COLUMNS
from spark_audit.model import acl_row, snapshot_frames, tenancy_frames
from spark_audit.ownership import owned_resources, owners
from spark_audit.report import AuditRun, access_matrix, replication_summary
from spark_audit.run import run_checks
from spark_audit.tenancy import Mm2ScopeRow, build_tenancy, tenancy_rows
from tests.conftest import REPO_ROOT, run_cli
from tests.tools.decided import decided, decided_example

ACME = REPO_ROOT / "examples" / "acme"
CLUSTERS = ("onprem", "cloud", "onprem-dr")
CLASSIFICATION = {name: t.classification for name, t in load_inventory(ACME).tenants.items()}
# Derived names of the flows to onprem-dr (the model encodes the '-' of a cluster alias)
PAYMENTS_DR_INTERNAL = mm2_internal_prefix(flow_id("payments", "onprem", "onprem-dr"))
RISK_DR_INTERNAL = mm2_internal_prefix(flow_id("risk", "onprem", "onprem-dr"))
RISK_DR_MM2 = mm2_principal(flow_id("risk", "onprem", "onprem-dr"))
PAYMENTS_CLOUD = flow_id("payments", "onprem", "cloud")
PAYMENTS_MM2 = mm2_principal(PAYMENTS_CLOUD)
MARKETING_MM2 = mm2_principal(flow_id("marketing", "onprem", "cloud"))
PAYMENTS_TOPICS = mm2_flow_topics(PAYMENTS_CLOUD)  # its offset-syncs, checkpoints, heartbeats on cloud

TOPICS = {
    "onprem": ["payments.orders", "payments.refunds", "payments.public.prices", "marketing.campaigns",
               "marketing.leads.eu", "hr.staff", "risk.exposures", "risk.limits.daily", "logistics.shipments",
               "__consumer_offsets", "_schemas", "mm2gov.ownership"],
    "cloud": ["onprem.payments.orders", "onprem.payments.refunds", "onprem.payments.public.prices",
              "onprem.marketing.campaigns", "onprem.marketing.leads.eu", "logistics.shipments",
              "mm2gov.payments-onprem-to-cloud.configs", "mm2gov.payments-onprem-to-cloud.offsets",
              "mm2gov.payments-onprem-to-cloud.status", "mm2gov.marketing-onprem-to-cloud.configs",
              "mm2gov.logistics-onprem-to-cloud.configs", "__consumer_offsets", "mm2gov.ownership",
              # the flow's own MM2 topics: only its MM2 may use them (PASSED with the generated ACLs)
              PAYMENTS_TOPICS.offset_syncs, PAYMENTS_TOPICS.checkpoints, PAYMENTS_TOPICS.heartbeats],
    "onprem-dr": ["onprem.payments.orders", "onprem.payments.public.prices", "onprem.risk.exposures",
                  f"{PAYMENTS_DR_INTERNAL}configs", f"{RISK_DR_INTERNAL}configs",
                  "__consumer_offsets"],
}
GROUP_OFFSETS = [
    ("onprem", "payments-billing", "payments.orders", p, 100 + p) for p in range(3)] + [
    ("onprem", "marketing-bi", "payments.public.prices", 0, 7),  # granted by payments
    ("cloud", "marketing-bi", "onprem.payments.public.prices", 0, 7),  # granted, remote name
    ("cloud", "logistics-tracker", "logistics.shipments", 0, 3),
    ("onprem-dr", "risk-dr-check", "onprem.risk.exposures", 0, 1),
]


def record(cluster: str, topic: str, partition: int, offset: int, ts: int, digest: str,
           marker: str | None = None) -> tuple:
    return (cluster, topic, partition, offset, ts, digest, marker, {"lob": marker} if marker else None)


RECORDS = (
    [record("onprem", "payments.orders", 0, i, 1000 + i, f"h{i}", "payments") for i in range(5)]
    + [record("cloud", "onprem.payments.orders", 0, 10 + i, 1000 + i, f"h{i}", "payments") for i in range(5)]
    + [record("onprem-dr", "onprem.payments.orders", 0, 20 + i, 1000 + i, f"h{i}", "payments") for i in range(5)]
    + [record("onprem", "marketing.campaigns", 0, i, 2000 + i, f"m{i}", "marketing") for i in range(3)]
    + [record("cloud", "onprem.marketing.campaigns", 0, i, 2000 + i, f"m{i}", "marketing") for i in range(3)]
    + [record("onprem", "logistics.shipments", 0, i, 3000 + i, f"l{i}") for i in range(3)]
    + [record("cloud", "logistics.shipments", 0, 5 + i, 3000 + i, f"l{i}") for i in range(3)]
    + [record("onprem", "hr.staff", 0, 0, 4000, "s0")]
)


def allow(cluster: str, principal: str, operation: str, resource_type: str, name: str,
          pattern: str = "PREFIXED", host: str = "*", permission: str = "ALLOW") -> tuple:
    return (cluster, principal, host, operation, permission, resource_type, name, pattern)


def deny(cluster: str, principal: str, operation: str, resource_type: str, name: str,
         pattern: str = "PREFIXED", host: str = "*") -> tuple:
    return allow(cluster, principal, operation, resource_type, name, pattern, host, "DENY")


@pytest.fixture(scope="module")
def acme_acls(tmp_path_factory: pytest.TempPathFactory) -> list[tuple]:
    """The ACL bindings `mm2gov generate examples/acme` writes, as snapshot rows."""
    out = tmp_path_factory.mktemp("acme-generated")
    done = run_cli("generate", str(ACME), "--out", str(out))
    assert done.returncode == 0, done.stderr
    rows = []
    for path in sorted((out / "acls").glob("*.json")):
        document = json.loads(path.read_text())
        rows += [acl_row(document["cluster"], binding) for binding in document["bindings"]]
    return rows


@pytest.fixture(scope="module")
def clean(acme_acls: list[tuple]) -> dict[str, list[tuple]]:
    """examples/acme as deployed: generated ACLs, SCRAM users for exactly the principals with
    ACLs on a cluster, topics, groups and records of a healthy estate."""
    users = {(cluster, principal.split(":", 1)[1]) for cluster, principal, *_ in acme_acls}
    return {
        "acls": acme_acls,
        "topics": [(cluster, topic, 3) for cluster, names in TOPICS.items() for topic in names],
        "group_offsets": GROUP_OFFSETS,
        "scram_users": sorted(users | {(cluster, "admin") for cluster in CLUSTERS}),
        "records": RECORDS,
        "admin_principals": [(cluster, "User:admin") for cluster in CLUSTERS],
    }


@pytest.fixture(scope="module")
def tenancy(spark: Any) -> Any:
    inventory, resolved = decided_example(ACME)
    return build_tenancy(spark, resolved, inventory.clusters)


def plus(base: dict[str, list[tuple]], **extra: list[tuple]) -> dict[str, list[tuple]]:
    return {table: [*rows, *extra.get(table, [])] for table, rows in base.items()}


def keys(found: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
    return {(f["tenant"], f["cluster"], f["resource_name"], f["principal"]) for f in found}


def by_resource(found: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(f["resource_name"], f["principal"]): f for f in found}


def reach(found: list[dict[str, Any]]) -> dict[tuple[str, str, str], list[tuple[str, str]]]:
    """(cluster, resource, principal) -> the (accessor, owner) pairs its evidence states."""
    return {(f["cluster"], f["resource_name"], f["principal"]): reach_of(f["evidence"]) for f in found}


# Per check: rows added to the clean snapshot, rows taken out of it, and the partial flags; rows added
# to acme's tenancy tables for that run only.
LEAKS: dict[str, dict[str, list[tuple]]] = {}
DROPPED: dict[str, Callable[[str, tuple], bool]] = {}
PARTIAL: dict[str, tuple[str, ...]] = {}
TENANCY_EXTRA: dict[str, dict[str, list[tuple]]] = {}


@pytest.fixture(scope="module")
def results(spark: Any, tenancy: Any, clean: dict[str, list[tuple]]) -> dict[str, list[dict[str, Any]]]:
    """"PASSED": every check on the clean snapshot; then each entry of LEAKS through its check.
    Run concurrently: a Spark query on tiny data is mostly driver latency, which overlaps."""

    def run(name: str) -> list[dict[str, Any]]:
        if name == "PASSED":
            found = run_checks(spark, snapshot_frames(spark, clean), tenancy)
        else:
            drop = DROPPED.get(name, lambda table, row: False)
            rows = {table: [r for r in items if not drop(table, r)]
                    for table, items in plus(clean, **LEAKS[name]).items()}
            snapshot = snapshot_frames(spark, rows, PARTIAL.get(name, ()))
            declared = tenancy
            if name in TENANCY_EXTRA:
                inventory, resolved = decided_example(ACME)
                rows = tenancy_rows(resolved, inventory.clusters)
                declared = tenancy_frames(spark, plus(rows, **TENANCY_EXTRA[name]))
            found = CHECKS[name.split(":")[0]].detect(snapshot, declared).collect()
        return [{**row.asDict(), "evidence": json.loads(row.evidence)} for row in found]

    names = ["PASSED", *LEAKS]
    with ThreadPoolExecutor(4) as pool:
        return dict(zip(names, pool.map(run, names), strict=True))


# --- PASSED: the deployed example is clean -----------------------------------------------------

def test_acme_as_generated_has_no_findings(results):
    above_info = [f"{f['check_id']} {f['message']}" for f in results["PASSED"] if SEVERITIES.index(f["severity"]) > 0]
    assert above_info == []
    assert results["PASSED"] == []


# --- FAILED: one test per check, its leaks just above it ------------------------------------------

LEAKS["ACL_CROSS_TENANT"] = {"acls": [
    allow("cloud", "User:marketing-app", "READ", "TOPIC", "onprem.payments.orders", "LITERAL"),
    # PREFIXED without the separator: payments' topics on onprem-dr, but not the one granted to marketing
    allow("onprem-dr", "User:marketing-app", "READ", "TOPIC", "onprem.pay"),
    # a grant covers READ/DESCRIBE only: WRITE on the granted prefix is reported (DESCRIBE is granted)
    allow("onprem", "User:marketing-app", "WRITE", "TOPIC", "payments.public."),
    # DENY ALL of the same principal on a matching PREFIXED pattern wins: nothing reported
    allow("onprem", "User:hr-app", "READ", "TOPIC", "risk.exposures", "LITERAL"),
    deny("onprem", "User:hr-app", "ALL", "TOPIC", "risk."),
    # a DENY READ for User:* kills READ, not the DESCRIBE the ALLOW READ implies
    allow("onprem", "User:logistics-app", "READ", "TOPIC", "hr.staff", "LITERAL"),
    deny("onprem", "User:*", "READ", "TOPIC", "hr.staff", "LITERAL"),
    # an ALLOW from one host is reported with the host
    allow("onprem-dr", "User:logistics-app", "READ", "TOPIC", "onprem.risk.", host="10.0.0.7"),
    # a DENY from one host leaves the ALLOW from every other host
    allow("onprem", "User:risk-engine", "WRITE", "TOPIC", "logistics.shipments", "LITERAL"),
    deny("onprem", "User:risk-engine", "WRITE", "TOPIC", "logistics.shipments", "LITERAL", host="10.1.1.1"),
    # User:* opens the topic to every tenant: reported once, for the owner
    allow("onprem-dr", "User:*", "READ", "TOPIC", "onprem.payments.orders", "LITERAL"),
    # ALL on groups, and an MM2 principal reaching another tenant's topic
    allow("onprem", "User:payments-app", "ALL", "GROUP", "marketing-"),
    allow("onprem", "User:mm2-marketing-onprem-to-cloud", "READ", "TOPIC", "payments.orders", "LITERAL"),
    # a transactional id is neither a topic nor a group: no topic or group is reached (and nothing breaks)
    allow("onprem", "User:marketing-app", "WRITE", "TRANSACTIONAL_ID", "payments."),
]}


def test_acl_cross_tenant(results):
    found = results["ACL_CROSS_TENANT"]
    assert keys(found) == {
        ("marketing", "cloud", "onprem.payments.orders", "User:marketing-app"),
        ("marketing", "onprem-dr", "onprem.payments.orders", "User:marketing-app"),
        ("marketing", "onprem", "payments.public.prices", "User:marketing-app"),
        ("logistics", "onprem", "hr.staff", "User:logistics-app"),
        ("logistics", "onprem-dr", "onprem.risk.exposures", "User:logistics-app"),
        ("risk", "onprem", "logistics.shipments", "User:risk-engine"),
        ("payments", "onprem-dr", "onprem.payments.orders", "User:*"),
        ("payments", "onprem", "marketing-bi", "User:payments-app"),
        ("marketing", "onprem", "payments.orders", "User:mm2-marketing-onprem-to-cloud"),
    }
    got = {(f["cluster"], f["resource_name"], f["principal"]): f for f in found}
    first = got[("cloud", "onprem.payments.orders", "User:marketing-app")]
    assert first["severity"] == "critical" and first["resource_type"] == "TOPIC"
    assert first["evidence"]["owner"] == "payments" and first["evidence"]["operations"] == ["DESCRIBE", "READ"]
    assert first["remediation"] == meta("ACL_CROSS_TENANT").remediation
    assert "User:marketing-app (tenant marketing) can DESCRIBE, READ cloud topic" in first["message"]
    assert got[("onprem", "payments.public.prices", "User:marketing-app")]["evidence"]["operations"] == ["WRITE"]
    assert got[("onprem", "hr.staff", "User:logistics-app")]["evidence"]["operations"] == ["DESCRIBE"]
    hosted = got[("onprem-dr", "onprem.risk.exposures", "User:logistics-app")]
    assert hosted["evidence"]["hosts"] == ["10.0.0.7"] and hosted["message"].endswith("from host 10.0.0.7")
    assert got[("onprem", "logistics.shipments", "User:risk-engine")]["evidence"]["operations"] == [
        "DESCRIBE", "WRITE"]
    assert got[("onprem", "marketing-bi", "User:payments-app")]["evidence"]["operations"] == [
        "DELETE", "DESCRIBE", "READ"]
    assert got[("onprem-dr", "onprem.payments.orders", "User:*")]["evidence"]["accessor_tenant"] == "*"
    assert reach(found) == {
        ("cloud", "onprem.payments.orders", "User:marketing-app"): [("marketing", "payments")],
        ("onprem-dr", "onprem.payments.orders", "User:marketing-app"): [("marketing", "payments")],
        ("onprem", "payments.public.prices", "User:marketing-app"): [("marketing", "payments")],
        ("onprem", "hr.staff", "User:logistics-app"): [("logistics", "hr")],
        ("onprem-dr", "onprem.risk.exposures", "User:logistics-app"): [("logistics", "risk")],
        ("onprem", "logistics.shipments", "User:risk-engine"): [("risk", "logistics")],
        ("onprem-dr", "onprem.payments.orders", "User:*"): [("*", "payments")],  # every principal
        ("onprem", "marketing-bi", "User:payments-app"): [("payments", "marketing")],
        ("onprem", "payments.orders", "User:mm2-marketing-onprem-to-cloud"): [("marketing", "payments")],
    }
    assert not any(REACH_UNKNOWN in f["evidence"] for f in found)


LEAKS["ACL_WILDCARD"] = {"acls": [
    allow("onprem", "User:*", "DESCRIBE", "CLUSTER", "kafka-cluster", "LITERAL"),
    allow("cloud", "User:payments-app", "READ", "GROUP", "*", "LITERAL"),
    allow("cloud", "User:admin", "ALL", "TOPIC", "*", "LITERAL"),  # the cluster's admin: left out
    deny("onprem", "User:*", "WRITE", "TOPIC", "*", "LITERAL"),  # a DENY protects
    allow("onprem", "User:hr-app", "READ", "TOPIC", "*"),  # PREFIXED '*': no name starts with '*'
    allow("cloud", "User:*", "WRITE", "TRANSACTIONAL_ID", "*", "LITERAL"),  # every producer's transactions
]}


def test_acl_wildcard(results):
    found = results["ACL_WILDCARD"]
    assert keys(found) == {("", "onprem", "kafka-cluster", "User:*"), ("payments", "cloud", "*", "User:payments-app"),
                           ("", "cloud", "*", "User:*")}
    txn = next(f for f in found if f["resource_type"] == "TRANSACTIONAL_ID")
    assert txn["evidence"]["operations"] == ["WRITE"] and txn["evidence"][REACH_UNKNOWN].startswith(
        "every transactional_id of cloud")
    assert {f["severity"] for f in found} == {"critical"}
    # whose data: every tenant's, today's and future: said explicitly, no tenant pair (ACL_CROSS_TENANT has those)
    assert all(f["evidence"][REACH] == [] and f["evidence"][REACH_UNKNOWN] for f in found)
    assert by_resource(found)[("*", "User:payments-app")]["evidence"][REACH_UNKNOWN].startswith(
        "every group of cloud")


LEAKS["ACL_PREFIX_OVERLAP"] = {"acls": [
    allow("onprem", "User:hr-app", "READ", "TOPIC", "ri"),  # covers risk.
    allow("cloud", "User:payments-app", "READ", "TOPIC", "onprem."),  # covers marketing's remote prefix
    allow("onprem", "User:marketing-app", "READ", "TOPIC", "payments.secret."),  # inside payments' names
    allow("onprem", "User:marketing-app", "READ", "TOPIC", "payments.public.eu."),  # inside a grant: fine
    allow("cloud", "User:mm2-logistics-onprem-to-cloud", "WRITE", "TOPIC", "mm2gov."),  # other flows' internals
    allow("onprem", "User:risk-engine", "READ", "GROUP", "payments"),  # covers the group prefix payments-
    allow("onprem", "User:marketing-app", "WRITE", "TRANSACTIONAL_ID", "payments."),  # not a topic or group name
]}


def test_acl_prefix_overlap(results):
    found = results["ACL_PREFIX_OVERLAP"]
    assert keys(found) == {
        ("hr", "onprem", "ri", "User:hr-app"),
        ("payments", "cloud", "onprem.", "User:payments-app"),
        ("marketing", "onprem", "payments.secret.", "User:marketing-app"),
        ("logistics", "cloud", "mm2gov.", "User:mm2-logistics-onprem-to-cloud"),
        ("risk", "onprem", "payments", "User:risk-engine"),
    }
    got = by_resource(found)
    assert got[("ri", "User:hr-app")]["evidence"]["covers"] == [{"tenant": "risk", "prefix": "risk."}]
    assert got[("mm2gov.", "User:mm2-logistics-onprem-to-cloud")]["evidence"]["covers"] == [
        {"tenant": "marketing", "prefix": "mm2gov.marketing-onprem-to-cloud."},
        {"tenant": "payments", "prefix": "mm2gov.payments-onprem-to-cloud."}]
    assert got[("payments.secret.", "User:marketing-app")]["evidence"]["covers"] == [
        {"tenant": "payments", "prefix": "payments."}]
    assert reach(found) == {
        ("onprem", "ri", "User:hr-app"): [("hr", "risk")],
        ("cloud", "onprem.", "User:payments-app"): [("payments", "marketing")],
        ("onprem", "payments.secret.", "User:marketing-app"): [("marketing", "payments")],
        ("cloud", "mm2gov.", "User:mm2-logistics-onprem-to-cloud"): [("logistics", "marketing"),
                                                                     ("logistics", "payments")],
        ("onprem", "payments", "User:risk-engine"): [("risk", "payments")],
    }


LEAKS["MM2_PRINCIPAL_OVERREACH"] = {"acls": [
    allow("onprem", "User:mm2-marketing-onprem-to-cloud", "READ", "TOPIC", "payments."),  # another tenant
    allow("onprem-dr", "User:mm2-marketing-onprem-to-cloud", "DESCRIBE", "CLUSTER", "kafka-cluster", "LITERAL"),
    # READ there is needed now (group offset sync commits on the remote topics); DELETE never is
    allow("cloud", "User:mm2-payments-onprem-to-cloud", "DELETE", "TOPIC", "onprem.payments."),
    allow("onprem", RISK_DR_MM2, "ALL", "TOPIC", "risk."),
    allow("onprem", RISK_DR_MM2, "READ", "TOPIC", "risk.exposures", "LITERAL"),  # in scope
    # cluster-level grants on the flow's own clusters: DESCRIBE lists every tenant's ACLs and SCRAM users
    allow("cloud", "User:mm2-payments-onprem-to-cloud", "ALTER", "CLUSTER", "kafka-cluster", "LITERAL"),
    allow("onprem", RISK_DR_MM2, "DESCRIBE", "CLUSTER", "kafka-cluster", "LITERAL"),
]}


def test_mm2_principal_overreach(results):
    found = results["MM2_PRINCIPAL_OVERREACH"]
    # What `mm2gov generate` itself grants is in PASSED, which test_acme_as_generated_has_no_findings
    # requires to be empty (compile/acls.py no longer grants MM2 `CLUSTER kafka-cluster DESCRIBE`).
    generated = keys([f for f in results["PASSED"] if f["check_id"] == "MM2_PRINCIPAL_OVERREACH"])
    assert keys(found) == generated | {
        ("marketing", "onprem", "payments.", "User:mm2-marketing-onprem-to-cloud"),
        ("marketing", "onprem-dr", "kafka-cluster", "User:mm2-marketing-onprem-to-cloud"),
        ("payments", "cloud", "onprem.payments.", "User:mm2-payments-onprem-to-cloud"),
        ("risk", "onprem", "risk.", RISK_DR_MM2),
        ("payments", "cloud", "kafka-cluster", "User:mm2-payments-onprem-to-cloud"),
        ("risk", "onprem", "kafka-cluster", RISK_DR_MM2),
    }
    assert {f["severity"] for f in found} == {"high"}
    got = {(f["cluster"], f["resource_name"], f["principal"]): f for f in found}
    foreign = got[("onprem", "payments.", "User:mm2-marketing-onprem-to-cloud")]
    assert foreign["evidence"]["reaches_tenants"] == ["payments"]
    assert foreign["evidence"]["operations"] == ["DESCRIBE", "READ"]
    assert reach_of(foreign["evidence"]) == [("marketing", "payments")]
    third = got[("onprem-dr", "kafka-cluster", "User:mm2-marketing-onprem-to-cloud")]
    assert "neither its source nor its target" in third["message"]
    own = got[("onprem", "risk.", RISK_DR_MM2)]
    assert own["evidence"]["operations"] == ["ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "WRITE"]
    assert own["evidence"][REACH] == [] and REACH_UNKNOWN not in own["evidence"]  # its own tenant's topics

    alter = got[("cloud", "kafka-cluster", "User:mm2-payments-onprem-to-cloud")]
    remote = got[("cloud", "onprem.payments.", "User:mm2-payments-onprem-to-cloud")]
    assert remote["evidence"]["operations"] == ["DELETE"]

    assert alter["resource_type"] == "CLUSTER" and alter["evidence"]["operations"] == ["ALTER", "DESCRIBE"]
    assert alter["message"] == (
        "User:mm2-payments-onprem-to-cloud (MM2 of flow payments-onprem-to-cloud) is allowed ALTER, DESCRIBE on "
        "literal cluster 'kafka-cluster' on cloud outside its flow's scope; a cluster-level grant: DESCRIBE lists "
        "every ACL binding and SCRAM user of cloud, other tenants' included, ALTER changes them")
    assert alter["evidence"][REACH] == []  # whose: every tenant's, said explicitly
    assert alter["evidence"][REACH_UNKNOWN] == (
        "cluster-level ALTER, DESCRIBE on cloud: every tenant's ACL bindings and SCRAM users")
    assert "CLUSTER" in alter["remediation"] and "must be removed" in alter["remediation"]
    describe = got[("onprem", "kafka-cluster", RISK_DR_MM2)]  # on its own source
    assert describe["evidence"]["operations"] == ["DESCRIBE"] and describe["evidence"]["pattern_type"] == "LITERAL"
    assert "outside its flow's scope; a cluster-level grant" in describe["message"]


# Exactly-once flows (payments' and marketing's to cloud): their MM2s' transactional ids on the target, as
# compile/acls.py `mm2_scope` grants them (names.py `mm2_transactional_ids`), added to acme's scopes.
PAYMENTS_TXN = mm2_transactional_ids(PAYMENTS_CLOUD)
MARKETING_TXN = mm2_transactional_ids(flow_id("marketing", "onprem", "cloud"))
TENANCY_EXTRA["MM2_PRINCIPAL_OVERREACH:transactional"] = {"mm2_scopes": [
    Mm2ScopeRow(tenant, flow_id(tenant, "onprem", "cloud"), principal, "cloud", "TRANSACTIONAL_ID", name,
                ("DESCRIBE", "WRITE"), pattern_type(name))
    for tenant, principal, ids in (("payments", PAYMENTS_MM2, PAYMENTS_TXN),
                                   ("marketing", MARKETING_MM2, MARKETING_TXN))
    for name in (ids.tasks, ids.leader)]}
LEAKS["MM2_PRINCIPAL_OVERREACH:transactional"] = {"acls": [
    # its own: the tasks' prefix, one task's id inside it, the leader's exact id
    allow("cloud", PAYMENTS_MM2, "WRITE", "TRANSACTIONAL_ID", PAYMENTS_TXN.tasks),
    allow("cloud", PAYMENTS_MM2, "DESCRIBE", "TRANSACTIONAL_ID", PAYMENTS_TXN.tasks),
    allow("cloud", PAYMENTS_MM2, "WRITE", "TRANSACTIONAL_ID", f"{PAYMENTS_TXN.tasks}MirrorSourceConnector-0",
          "LITERAL"),
    allow("cloud", PAYMENTS_MM2, "WRITE", "TRANSACTIONAL_ID", PAYMENTS_TXN.leader, "LITERAL"),
    # beyond them: every Connect cluster's leader, another flow's tasks, every id, its leader's name as a
    # prefix (a LITERAL scope entry covers that one name only), its own prefix on its source
    allow("cloud", PAYMENTS_MM2, "WRITE", "TRANSACTIONAL_ID", "connect-cluster-"),
    allow("cloud", PAYMENTS_MM2, "WRITE", "TRANSACTIONAL_ID", MARKETING_TXN.tasks),
    allow("cloud", MARKETING_MM2, "DESCRIBE", "TRANSACTIONAL_ID", "*", "LITERAL"),
    allow("cloud", PAYMENTS_MM2, "WRITE", "TRANSACTIONAL_ID", PAYMENTS_TXN.leader),
    allow("onprem", PAYMENTS_MM2, "WRITE", "TRANSACTIONAL_ID", PAYMENTS_TXN.tasks),
]}


def test_mm2_principal_overreach_on_transactional_ids(results):
    found = results["MM2_PRINCIPAL_OVERREACH:transactional"]
    assert {(f["cluster"], f["resource_name"], f["principal"]) for f in found} == {
        ("cloud", "connect-cluster-", PAYMENTS_MM2),
        ("cloud", MARKETING_TXN.tasks, PAYMENTS_MM2),
        ("cloud", "*", MARKETING_MM2),
        ("cloud", PAYMENTS_TXN.leader, PAYMENTS_MM2),
        ("onprem", PAYMENTS_TXN.tasks, PAYMENTS_MM2),
    }
    assert {f["resource_type"] for f in found} == {"TRANSACTIONAL_ID"} and {f["severity"] for f in found} == {"high"}
    got = {(f["cluster"], f["resource_name"], f["principal"]): f for f in found}
    leaders = got[("cloud", "connect-cluster-", PAYMENTS_MM2)]
    assert leaders["evidence"]["pattern_type"] == "PREFIXED" and leaders["evidence"]["operations"] == [
        "DESCRIBE", "WRITE"]
    assert leaders["message"].startswith(f"{PAYMENTS_MM2} (MM2 of flow {PAYMENTS_CLOUD}) is allowed DESCRIBE, WRITE "
                                         "on prefixed transactional_id 'connect-cluster-' on cloud outside")
    # whose transactions it can fence: the other exactly-once flow's (its leader), and anyone's (unknown)
    assert leaders["evidence"]["reaches_tenants"] == ["marketing"]
    assert reach_of(leaders["evidence"]) == [("payments", "marketing")]
    assert leaders["evidence"][REACH_UNKNOWN].startswith("transactional ids outside its flow's own on cloud")
    assert reach_of(got[("cloud", MARKETING_TXN.tasks, PAYMENTS_MM2)]["evidence"]) == [("payments", "marketing")]
    assert reach_of(got[("cloud", "*", MARKETING_MM2)]["evidence"]) == [("marketing", "payments")]
    assert reach_of(got[("cloud", PAYMENTS_TXN.leader, PAYMENTS_MM2)]["evidence"]) == []
    assert "neither" not in got[("onprem", PAYMENTS_TXN.tasks, PAYMENTS_MM2)]["message"]  # its source


LEAKS["INTERNAL_TOPIC_EXPOSED"] = {
    "topics": [("cloud", "mm2-offset-syncs.cloud.internal", 1), ("cloud", "heartbeats", 1),
               ("cloud", "onprem.checkpoints.internal", 1)],
    "acls": [
        allow("cloud", "User:marketing-app", "READ", "TOPIC", "mm2gov.payments-onprem-to-cloud."),
        allow("cloud", "User:mm2-payments-onprem-to-cloud", "WRITE", "TOPIC", "mm2-offset-syncs.cloud.internal",
              "LITERAL"),
        allow("cloud", "User:mm2-marketing-onprem-to-cloud", "READ", "TOPIC", "mm2-offset-syncs."),
        allow("cloud", "User:legacy-mm2", "ALL", "TOPIC", "heartbeats", "LITERAL"),
        allow("cloud", "User:admin", "ALL", "TOPIC", "*", "LITERAL"),
        allow("cloud", "User:hr-app", "DESCRIBE", "TOPIC", "mm2gov."),  # describe only: names, not contents
        # the flow's own topics: its own tenant's principal, another flow's MM2, every principal
        allow("cloud", "User:payments-app", "READ", "TOPIC", PAYMENTS_TOPICS.checkpoints, "LITERAL"),
        allow("cloud", MARKETING_MM2, "READ", "TOPIC", PAYMENTS_TOPICS.offset_syncs, "LITERAL"),
        allow("cloud", "User:*", "READ", "TOPIC", PAYMENTS_TOPICS.heartbeats, "LITERAL"),
        # Kafka's default per-alias checkpoints topic, used by two tenants' MM2s: shared
        allow("cloud", PAYMENTS_MM2, "WRITE", "TOPIC", "onprem.checkpoints.internal", "LITERAL"),
        allow("cloud", "User:mm2-logistics-onprem-to-cloud", "READ", "TOPIC", "onprem.checkpoints.internal",
              "LITERAL"),
        allow("cloud", "User:marketing-app", "WRITE", "TRANSACTIONAL_ID", "mm2gov."),  # no topic: nothing
    ],
}
FLOW_TOPIC_ROLES = {"configs": "configs", "offsets": "offsets", "status": "status", "offset-syncs": "offset_syncs",
                    "checkpoints": "checkpoints", "heartbeats": "heartbeats"}


def test_internal_topic_exposed(results):
    found = results["INTERNAL_TOPIC_EXPOSED"]
    flow_topics = {f"{mm2_internal_prefix(PAYMENTS_CLOUD)}{suffix}" for suffix in FLOW_TOPIC_ROLES}
    assert keys(found) == {("marketing", "cloud", topic, "User:marketing-app") for topic in flow_topics} | {
        ("payments", "cloud", PAYMENTS_TOPICS.checkpoints, "User:payments-app"),  # even its own tenant
        ("marketing", "cloud", PAYMENTS_TOPICS.offset_syncs, MARKETING_MM2),  # another flow's MM2
        ("payments", "cloud", PAYMENTS_TOPICS.heartbeats, "User:*"),
        ("", "cloud", "heartbeats", "User:legacy-mm2"),
        ("", "cloud", "mm2-offset-syncs.cloud.internal", ""),
        ("", "cloud", "onprem.checkpoints.internal", ""),
    }
    got = by_resource(found)
    shared = got[("mm2-offset-syncs.cloud.internal", "")]
    assert shared["evidence"]["kind"] == "shared" and shared["evidence"]["tenants"] == ["marketing", "payments"]
    assert got[("onprem.checkpoints.internal", "")]["evidence"]["tenants"] == ["logistics", "payments"]
    own = got[(PAYMENTS_TOPICS.checkpoints, "User:payments-app")]
    assert own["evidence"]["mm2_topic"] == "checkpoints" and own["evidence"]["flow_id"] == PAYMENTS_CLOUD
    assert own["message"] == (f"User:payments-app (tenant payments) can READ MirrorMaker 2 internal topic "
                              f"{PAYMENTS_TOPICS.checkpoints} on cloud (checkpoints topic of flow {PAYMENTS_CLOUD})")
    for suffix, role in FLOW_TOPIC_ROLES.items():
        topic = f"{mm2_internal_prefix(PAYMENTS_CLOUD)}{suffix}"
        assert got[(topic, "User:marketing-app")]["evidence"]["mm2_topic"] == role
    assert reach(found) == {
        **{("cloud", topic, "User:marketing-app"): [("marketing", "payments")] for topic in flow_topics},
        ("cloud", PAYMENTS_TOPICS.checkpoints, "User:payments-app"): [],  # its own tenant's data, still a finding
        ("cloud", PAYMENTS_TOPICS.offset_syncs, MARKETING_MM2): [("marketing", "payments")],
        ("cloud", PAYMENTS_TOPICS.heartbeats, "User:*"): [("*", "payments")],
        ("cloud", "heartbeats", "User:legacy-mm2"): [],  # no flow owns it: said in reach_unknown
        ("cloud", "mm2-offset-syncs.cloud.internal", ""): [("marketing", "payments"), ("payments", "marketing")],
        ("cloud", "onprem.checkpoints.internal", ""): [("logistics", "payments"), ("payments", "logistics")],
    }
    assert "no flow owns" in got[("heartbeats", "User:legacy-mm2")]["evidence"][REACH_UNKNOWN]
    assert REACH_UNKNOWN not in own["evidence"]
    # the flow's own MM2 on its own topics (the generated ACLs, in PASSED too) is never a finding
    assert not [f for f in found if f["principal"] == PAYMENTS_MM2]


# A hostile tenant declaring a prefix inside another flow's internal names (a policy violation the
# audit still sees): the flow's checkpoints topic stays its own, and hr's principal on it is reported.
TENANCY_EXTRA["INTERNAL_TOPIC_EXPOSED:hostile-prefix"] = {"tenant_prefixes": [
    ("hr", "topic", f"{mm2_internal_prefix(PAYMENTS_CLOUD)}check", None, "own", None),
    ("hr", "topic", "mm2gov.hr-left-", None, "own", None)]}
LEAKS["INTERNAL_TOPIC_EXPOSED:hostile-prefix"] = {
    "topics": [("cloud", "mm2gov.hr-left-over.offsets", 1)],
    "acls": [allow("cloud", "User:hr-app", "READ", "TOPIC", PAYMENTS_TOPICS.checkpoints, "LITERAL"),
             allow("cloud", "User:hr-app", "READ", "TOPIC", "mm2gov.hr-left-over.offsets", "LITERAL")]}


def test_internal_topic_exposed_fails_closed_on_a_prefix_taking_over_internal_names(results):
    found = results["INTERNAL_TOPIC_EXPOSED:hostile-prefix"]
    assert keys(found) == {("hr", "cloud", PAYMENTS_TOPICS.checkpoints, "User:hr-app"),
                           ("hr", "cloud", "mm2gov.hr-left-over.offsets", "User:hr-app")}
    got = by_resource(found)
    own = got[(PAYMENTS_TOPICS.checkpoints, "User:hr-app")]["evidence"]
    assert own["flow_id"] == PAYMENTS_CLOUD and own["mm2_topic"] == "checkpoints"
    assert reach_of(own) == [("hr", "payments")]
    assert "no flow owns" in got[("mm2gov.hr-left-over.offsets", "User:hr-app")]["evidence"][REACH_UNKNOWN]


LEAKS["ACL_STALE"] = {
    "acls": [
        allow("onprem", "User:old-app", "READ", "TOPIC", "payments."),
        allow("onprem", "User:old-app", "WRITE", "TOPIC", "payments."),
        allow("onprem-dr", "User:mm2-hr-onprem-to-onprem-dr", "READ", "TOPIC", "hr."),  # no such flow
        deny("cloud", "User:ghost", "READ", "TOPIC", "payments."),  # DENY only: harmless
        allow("cloud", "User:old-txn", "WRITE", "TRANSACTIONAL_ID", "old-txn-"),  # a transactional producer's
    ],
    "scram_users": [("onprem", "old-app"), ("cloud", "mm2")],
}


def test_acl_stale(results):
    found = results["ACL_STALE"]
    assert keys(found) == {
        ("", "onprem", "old-app", "User:old-app"),
        ("", "cloud", "mm2", "User:mm2"),
        ("", "onprem-dr", "mm2-hr-onprem-to-onprem-dr", "User:mm2-hr-onprem-to-onprem-dr"),
        ("", "cloud", "old-txn", "User:old-txn"),
    }
    assert by_resource(found)[("old-txn", "User:old-txn")]["evidence"]["sample"] == [{
        "resource_type": "TRANSACTIONAL_ID", "resource_name": "old-txn-", "pattern_type": "PREFIXED",
        "operation": "WRITE", "host": "*"}]
    old = by_resource(found)[("old-app", "User:old-app")]
    assert old["evidence"]["acl_bindings"] == 2 and old["evidence"]["scram_user"] is True
    assert by_resource(found)[("mm2", "User:mm2")]["evidence"]["acl_bindings"] == 0


# Look-alikes of declared, MM2 and admin principals (issue 24, class 6): ACL_STALE alone called them medium.
LEAKS["PRINCIPAL_LOOKALIKE"] = {
    "acls": [
        allow("onprem", "User:MM2-payments-onprem-to-cloud", "READ", "TOPIC", "payments."),  # a flow's MM2, in caps
        allow("cloud", "User:admin ", "READ", "TOPIC", "logistics.shipments", "LITERAL"),  # the admin, a blank
        allow("onprem", "User:MM2-ghost", "WRITE", "TOPIC", "marketing.campaigns", "LITERAL"),  # reserved prefix
        # a look-alike whose only binding a DENY cancels reaches nothing; one on no tenant's names neither
        allow("onprem", "User:Payments-App", "READ", "TOPIC", "payments.orders", "LITERAL"),
        deny("onprem", "User:Payments-App", "ALL", "TOPIC", "payments."),
        allow("onprem", "User:HR-app", "READ", "TOPIC", "stray", "LITERAL"),
        # exact reserved names nobody declares are ACL_STALE's left-overs, not look-alikes
        allow("onprem-dr", "User:mm2-hr-onprem-to-onprem-dr", "READ", "TOPIC", "hr."),
    ],
    "scram_users": [("onprem", "ma\u200brketing-app")],  # a zero-width look-alike with no binding: no reach
}


def test_principal_lookalike(results):
    found = results["PRINCIPAL_LOOKALIKE"]
    assert keys(found) == {("", "onprem", "MM2-payments-onprem-to-cloud", "User:MM2-payments-onprem-to-cloud"),
                           ("", "cloud", "admin ", "User:admin "), ("", "onprem", "MM2-ghost", "User:MM2-ghost")}
    got = {f["principal"]: f for f in found}
    mm2 = got["User:MM2-payments-onprem-to-cloud"]
    assert mm2["severity"] == "critical"  # payments' data is confidential
    assert mm2["evidence"]["imitated"] == PAYMENTS_MM2
    assert mm2["evidence"]["imitates"] == "mm2 principal of tenant payments"
    assert mm2["evidence"]["operations"] == ["DESCRIBE", "READ"]
    assert mm2["evidence"]["reaches_tenants"] == ["payments"]
    assert got["User:admin "]["severity"] == "high"  # logistics' data is internal
    assert got["User:admin "]["message"] == (
        "User:admin  is declared by no tenant but is named like User:admin (an admin (super user) principal) and "
        "can DESCRIBE, READ names of tenant(s) logistics on cloud")
    assert got["User:MM2-ghost"]["evidence"]["imitated"] == "User:mm2-*"
    assert reach(found) == {
        ("onprem", "MM2-payments-onprem-to-cloud", "User:MM2-payments-onprem-to-cloud"): [("", "payments")],
        ("cloud", "admin ", "User:admin "): [("", "logistics")],
        ("onprem", "MM2-ghost", "User:MM2-ghost"): [("", "marketing")]}
    # the default --fail-on high fails on every one of them (ACL_STALE's medium would not)
    assert all(SEVERITIES.index(f["severity"]) >= SEVERITIES.index("high") for f in found)


LEAKS["TOPIC_UNOWNED"] = {"topics": [
    ("onprem", "stray", 1), ("cloud", "onprem.hr.staff", 1), ("cloud", "connect-configs", 1),
    ("onprem", "mm2gov.payments-onprem-to-cloud.configs", 1),  # a flow's internals off its target
]}


def test_topic_unowned(results):
    found = results["TOPIC_UNOWNED"]
    assert keys(found) == {("", "onprem", "stray", ""), ("", "cloud", "onprem.hr.staff", ""),
                           ("", "cloud", "connect-configs", ""),
                           ("", "onprem", "mm2gov.payments-onprem-to-cloud.configs", "")}
    assert {f["severity"] for f in found} == {"low"}


LEAKS["TOPIC_SCOPE_MISMATCH"] = {"topics": [
    ("cloud", "onprem.hr.staff", 1),  # hr's data under no tenant's name (hr has no flow)
    ("cloud", "onprem.payments.secret", 1),  # payments' remote prefix, but no flow regex matches
    ("onprem-dr", "onprem.marketing.campaigns", 1),  # marketing has no flow to onprem-dr
    ("cloud", "onprem.payments.orders.v2", 1),  # matched by payments\\.orders.*: fine
]}


def test_topic_scope_mismatch(results):
    found = results["TOPIC_SCOPE_MISMATCH"]
    assert keys(found) == {("hr", "cloud", "onprem.hr.staff", ""), ("payments", "cloud", "onprem.payments.secret", ""),
                           ("marketing", "onprem-dr", "onprem.marketing.campaigns", "")}
    secret = by_resource(found)[("onprem.payments.secret", "")]
    assert secret["evidence"]["produced_by_declared_flow"] is False and "no declared flow" in secret["message"]
    assert secret["evidence"][REACH] == [] and REACH_UNKNOWN not in secret["evidence"]  # payments' own data
    nobodys = by_resource(found)[("onprem.hr.staff", "")]["evidence"]
    assert nobodys[REACH] == [] and nobodys[REACH_UNKNOWN].startswith("hr's data under no tenant's name")


def test_a_flows_exclusions_are_what_it_does_not_copy(spark, tenancy, clean, tmp_path):
    """Issue 25: the audit judges a flow by what its MM2 copies, topics minus exclude_topics, as compile writes
    it. payments' flow to cloud excludes payments.orders.tmp*, which its topic regex payments\\.orders.* also
    matches: a replica of it on cloud is one no declared flow produces (TOPIC_SCOPE_MISMATCH), and its records
    missing there are no replication gap (the flow does not copy it)."""
    repo = tmp_path / "acme"
    shutil.copytree(ACME, repo)
    tenant = yaml.safe_load((repo / "tenants" / "payments.yaml").read_text())
    tenant["flows"][0]["exclude_topics"] = ["payments\\.orders\\.tmp.*"]
    (repo / "tenants" / "payments.yaml").write_text(yaml.safe_dump(tenant))
    inventory, resolved = decided(repo)
    declared = build_tenancy(spark, resolved, inventory.clusters)
    excluded = [record("onprem", "payments.orders.tmp", 0, i, 5000 + i, f"t{i}", "payments") for i in range(3)]
    copied = [record("cloud", "onprem.payments.orders.tmp", 0, n, 5000 + i, f"t{i}", "payments")
              for n, i in enumerate((0, 2))]  # t1 is not there: inside the window, so missing if the flow copied it
    rows = plus(clean, topics=[("onprem", "payments.orders.tmp", 1), ("cloud", "onprem.payments.orders.tmp", 1)],
                records=[*excluded, *copied])
    found = run_checks(spark, snapshot_frames(spark, rows), declared, ["TOPIC_SCOPE_MISMATCH", "REPLICATION_GAP"])
    about = {(f.check_id, f.resource_name) for f in found if "tmp" in f.resource_name}
    assert about == {("TOPIC_SCOPE_MISMATCH", "onprem.payments.orders.tmp")}
    [mismatch] = [f for f in found if f.resource_name == "onprem.payments.orders.tmp"]
    assert json.loads(mismatch.evidence)["produced_by_declared_flow"] is False
    # the same estate judged by acme's tenancy (no exclusion): the copy is the flow's, and a record is missing
    found = run_checks(spark, snapshot_frames(spark, rows), tenancy, ["TOPIC_SCOPE_MISMATCH", "REPLICATION_GAP"])
    assert {(f.check_id, f.resource_name) for f in found if "tmp" in f.resource_name} == {
        ("REPLICATION_GAP", "onprem.payments.orders.tmp")}


LEAKS["GROUP_CROSS_TENANT"] = {"group_offsets": [
    ("onprem", "marketing-bi", "payments.orders", 0, 42),
    ("onprem", "marketing-bi", "payments.orders", 1, 40),
    ("cloud", "risk-analytics", "onprem.payments.orders", 0, 5),
    # groups outside every tenant's prefixes (issue 24, class 6: reported by no check before): payments'
    # data is confidential, logistics' internal; a group of no tenant on a topic of no tenant is not a read
    # of a tenant's data (TOPIC_UNOWNED reports the topic)
    ("onprem", "adhoc", "payments.orders", 0, 1),
    ("cloud", "ADHOC-2", "logistics.shipments", 0, 9),
    ("onprem", "adhoc", "stray.topic", 0, 1),
]}


def test_group_cross_tenant(results):
    found = results["GROUP_CROSS_TENANT"]
    assert keys(found) == {("marketing", "onprem", "marketing-bi", ""), ("risk", "cloud", "risk-analytics", ""),
                           ("", "onprem", "adhoc", ""), ("", "cloud", "ADHOC-2", "")}
    bi = by_resource(found)[("marketing-bi", "")]
    assert bi["evidence"]["topic"] == "payments.orders" and bi["evidence"]["topic_owner"] == "payments"
    assert bi["evidence"]["offsets"] == [{"partition": 0, "offset": 42}, {"partition": 1, "offset": 40}]
    assert reach(found) == {("onprem", "marketing-bi", ""): [("marketing", "payments")],
                            ("cloud", "risk-analytics", ""): [("risk", "payments")],
                            ("onprem", "adhoc", ""): [("", "payments")], ("cloud", "ADHOC-2", ""): [("", "logistics")]}
    severity = {f["resource_name"]: f["severity"] for f in found}
    # tenants' groups: critical; no tenant's: the data's weight (confidential: critical, internal: high)
    assert severity == {"marketing-bi": "critical", "risk-analytics": "critical", "adhoc": "critical",
                        "ADHOC-2": "high"}
    assert by_resource(found)[("ADHOC-2", "")]["message"] == (
        "group ADHOC-2, which no tenant owns, has committed offsets on cloud topic logistics.shipments owned by "
        "logistics")


LEAKS["RECORD_TENANT_MISMATCH"] = {"records": [
    record("onprem", "payments.orders", 1, 100, 1100, "x1", "marketing"),
    record("onprem", "payments.orders", 2, 7, 1101, "x2", "marketing"),
    record("onprem", "marketing.campaigns", 0, 7, 2100, "x3", "finance"),  # no tenant's marker
    ("onprem", "hr.staff", 0, 3, 4100, "x4", "risk", None),  # marker value only, no headers
]}


def test_record_tenant_mismatch(results):
    found = results["RECORD_TENANT_MISMATCH"]
    assert keys(found) == {("payments", "onprem", "payments.orders", ""),
                           ("marketing", "onprem", "marketing.campaigns", ""), ("hr", "onprem", "hr.staff", "")}
    got = {f["resource_name"]: f["evidence"] for f in found}
    assert got["payments.orders"]["marked_as"] == "marketing" and got["payments.orders"]["records"] == 2
    assert got["payments.orders"]["samples"] == [{"partition": 1, "offset": 100}, {"partition": 2, "offset": 7}]
    assert got["marketing.campaigns"]["marked_as"] == "" and got["marketing.campaigns"]["marker_values"] == ["finance"]
    assert got["hr.staff"]["marked_as"] == "risk"
    # payments' topic holds marketing's records: payments (its principals) reach marketing's data
    assert reach(found) == {("onprem", "payments.orders", ""): [("payments", "marketing")],
                            ("onprem", "marketing.campaigns", ""): [], ("onprem", "hr.staff", ""): [("hr", "risk")]}
    assert got["marketing.campaigns"][REACH_UNKNOWN] == "records marked finance: no declared tenant's marker"
    assert not any("x1" in json.dumps(f) for f in found)  # record identities and values stay out


LEAKS["REPLICATION_GAP"] = {"records": [
    record("cloud", "onprem.payments.orders", 0, 15, 1003, "h3", "payments"),  # h3 twice on the target
    record("onprem", "payments.orders", 0, 5, 1005, "h5", "payments"),  # newer than the target: in flight
    record("onprem", "payments.orders", 1, 0, 1000, "p1", "payments"),  # no target records: no verdict
]}
DROPPED["REPLICATION_GAP"] = lambda table, row: table == "records" and row[:2] == (
    "cloud", "onprem.payments.orders") and row[5] == "h2"  # h2 never reached the target
LEAKS["REPLICATION_GAP:partial"] = LEAKS["REPLICATION_GAP"]
DROPPED["REPLICATION_GAP:partial"] = DROPPED["REPLICATION_GAP"]
PARTIAL["REPLICATION_GAP:partial"] = ("cloud:records",)


# Duplicates only: m1 twice on marketing's target partition 0; partition 1 complete (counted in the rate).
LEAKS["REPLICATION_GAP:duplicates"] = {"records": [
    record("cloud", "onprem.marketing.campaigns", 0, 3, 2001, "m1", "marketing"),
    *[record(cluster, topic, 1, i, 2010 + i, f"n{i}", "marketing")
      for cluster, topic in (("onprem", "marketing.campaigns"), ("cloud", "onprem.marketing.campaigns"))
      for i in range(2)],
]}


def test_replication_gap(results):
    found = results["REPLICATION_GAP"]
    assert keys(found) == {("payments", "cloud", "onprem.payments.orders", "User:mm2-payments-onprem-to-cloud")}
    [gap] = found
    assert gap["evidence"]["missing"] == 1 and gap["evidence"]["duplicated"] == 1
    assert gap["evidence"]["missing_source_offsets"] == [2]
    assert gap["evidence"]["duplicated_target_offsets"] == [13, 15]
    assert gap["evidence"]["window"] == {"from_ts": 1000, "to_ts": 1004}
    # the flow's rates over the same window: h0..h4 on the source (h5 is newer than the target: in flight;
    # partition 1 has no target records: no verdict, not counted)
    assert gap["evidence"]["source_records"] == 5
    assert gap["evidence"]["flow"] == {"source_records": 5, "missing": 1, "duplicated": 1, "missing_rate": 0.2,
                                       "duplicated_rate": 0.2, "partitions": 1}
    assert gap["severity"] == "medium"  # records missing: the catalog's severity
    assert "flow payments-onprem-to-cloud: 20.0000% missing, 20.0000% duplicated of 5 source records" in gap[
        "message"]
    assert results["REPLICATION_GAP:partial"] == []  # the target's records were not all collected


def test_replication_gap_duplicates_only_is_a_lower_severity_finding_with_its_flows_rate(results):
    [dup] = results["REPLICATION_GAP:duplicates"]
    assert (dup["tenant"], dup["resource_name"], dup["principal"]) == (
        "marketing", "onprem.marketing.campaigns", MARKETING_MM2)
    assert dup["evidence"]["missing"] == 0 and dup["evidence"]["duplicated"] == 1
    assert dup["evidence"]["source_records"] == 3 and dup["evidence"]["duplicated_target_offsets"] == [1, 3]
    # 1 duplicate over the 5 source records of both scanned partitions
    assert dup["evidence"]["flow"] == {"source_records": 5, "missing": 0, "duplicated": 1, "missing_rate": 0.0,
                                       "duplicated_rate": 0.2, "partitions": 2}
    assert dup["severity"] == "low" and SEVERITIES.index("low") < SEVERITIES.index(meta("REPLICATION_GAP").severity)
    summary = replication_summary(AuditRun(run_id="r", started="", repo="acme", clusters=list(CLUSTERS),
                                           findings=[*results["REPLICATION_GAP"], dup]))
    assert [(r["flow_id"], r["severity"], r["missing_rate"], r["duplicated_rate"], r["partitions_with_gap"])
            for r in summary] == [(PAYMENTS_CLOUD, "medium", 0.2, 0.2, 1),
                                  ("marketing-onprem-to-cloud", "low", 0.0, 0.2, 1)]


def test_every_check_states_its_reach_through_the_evidence_contract(results):
    """REACH_CHECKS write `reach` on every finding (well-formed pairs), the others neither key."""
    assert set(REACH_CHECKS) <= set(CHECKS)
    for name, found in results.items():
        for f in found:
            evidence = f["evidence"]
            if f["check_id"] in REACH_CHECKS:
                assert isinstance(evidence[REACH], list), (name, f)
                assert len(reach_of(evidence)) == len(evidence[REACH]), (name, f)  # distinct, well-formed
                assert [tuple(p.values()) for p in evidence[REACH]] == reach_of(evidence)  # sorted
            else:
                assert REACH not in evidence and REACH_UNKNOWN not in evidence, (name, f)


# The cross-tenant reach of every planted leak above, as the report's matrix must count it:
# (accessor row, owner column) -> {check: findings}.
PLANTED_CELLS = {
    ("marketing", "payments"): {"ACL_CROSS_TENANT": 4, "ACL_PREFIX_OVERLAP": 1, "MM2_PRINCIPAL_OVERREACH": 1,
                                "INTERNAL_TOPIC_EXPOSED": 8, "GROUP_CROSS_TENANT": 1},
    ("payments", "marketing"): {"ACL_CROSS_TENANT": 1, "ACL_PREFIX_OVERLAP": 1, "INTERNAL_TOPIC_EXPOSED": 1,
                                "RECORD_TENANT_MISMATCH": 1},
    ("logistics", "hr"): {"ACL_CROSS_TENANT": 1},
    ("logistics", "risk"): {"ACL_CROSS_TENANT": 1},
    ("logistics", "marketing"): {"ACL_PREFIX_OVERLAP": 1},
    ("risk", "logistics"): {"ACL_CROSS_TENANT": 1},
    ("risk", "payments"): {"ACL_PREFIX_OVERLAP": 1, "GROUP_CROSS_TENANT": 1},
    ("hr", "risk"): {"ACL_PREFIX_OVERLAP": 1, "RECORD_TENANT_MISMATCH": 1},
    ("*", "payments"): {"ACL_CROSS_TENANT": 1, "INTERNAL_TOPIC_EXPOSED": 1},  # User:*
    ("logistics", "payments"): {"ACL_PREFIX_OVERLAP": 1, "INTERNAL_TOPIC_EXPOSED": 1},  # a shared checkpoints topic
    ("payments", "logistics"): {"INTERNAL_TOPIC_EXPOSED": 1},
    # reach from no tenant: groups outside every tenant's prefixes, look-alike principals (issue 24, class 6)
    ("", "payments"): {"GROUP_CROSS_TENANT": 1, "PRINCIPAL_LOOKALIKE": 1},
    ("", "logistics"): {"GROUP_CROSS_TENANT": 1, "PRINCIPAL_LOOKALIKE": 1},
    ("", "marketing"): {"PRINCIPAL_LOOKALIKE": 1},
}


def test_the_report_matrix_counts_what_the_detectors_find(results):
    """The seam the matrix depends on: detector output straight into report.access_matrix."""
    tenants = sorted(load_inventory(ACME).tenants)
    planted = [f for name, found in results.items() if name != "PASSED" and ":" not in name for f in found]
    m = access_matrix(AuditRun(run_id="r", started="", repo="acme", clusters=list(CLUSTERS), tenants=tenants,
                               findings=planted))
    assert m["tenants"] == [*tenants, "*", ""]
    cells = {(a, b): n for a, row in m["counts"].items() for b, n in row.items() if n}
    assert cells == {cell: sum(checks.values()) for cell, checks in PLANTED_CELLS.items()}
    assert m["counts"]["marketing"]["payments"] == 15  # marketing reaches payments: row marketing, column payments
    assert {(a, b): checks for a, row in m["checks"].items() for b, checks in row.items()} == PLANTED_CELLS
    assert m["total"] == 37 and m["max"] == 15
    # reach that names no tenant pair is counted aside, never in a cell
    assert set(m["unattributed"]) == {"ACL_WILDCARD", "INTERNAL_TOPIC_EXPOSED", "MM2_PRINCIPAL_OVERREACH",
                                      "RECORD_TENANT_MISMATCH", "TOPIC_SCOPE_MISMATCH"}
    assert m["unattributed"]["ACL_WILDCARD"] == 3 and m["unattributed"]["TOPIC_SCOPE_MISMATCH"] == 2
    clean = access_matrix(AuditRun(run_id="c", started="", repo="acme", clusters=list(CLUSTERS), tenants=tenants,
                                   findings=results["PASSED"]))
    assert clean["total"] == 0 and clean["tenants"] == tenants


def test_findings_have_the_contract_shape(results):
    assert all(tuple(f) == COLUMNS for found in results.values() for f in found)
    for f in (f for found in results.values() for f in found):  # the catalog's severity, but duplicates only
        lower = f["check_id"] == "REPLICATION_GAP" and f["evidence"]["missing"] == 0
        if f["check_id"] == "PRINCIPAL_LOOKALIKE" or (f["check_id"] == "GROUP_CROSS_TENANT" and not f["tenant"]):
            # weighed by the data reached: the highest DATA_SEVERITY of the owners' classifications
            owners = [owner for _, owner in reach_of(f["evidence"])]
            assert f["severity"] == max((DATA_SEVERITY[CLASSIFICATION[o]] for o in owners), key=SEVERITIES.index), f
            continue
        assert f["severity"] == ("low" if lower else meta(f["check_id"]).severity), f


def test_ownership_is_the_longest_prefix_and_the_clusters_own_first(spark):
    prefixes = [("outer", "topic", "a.", None, "own", None), ("inner", "topic", "a.b.", None, "own", None),
                ("replica", "topic", "a.b.", "x", "remote", "replica-y-to-x"),
                ("grp", "group", "a.", None, "own", None)]
    tenancy = tenancy_frames(spark, {"tenant_prefixes": prefixes})
    names = spark.createDataFrame([("y", "a.b.c"), ("x", "a.b.c"), ("y", "a.c"), ("y", "a."), ("y", "a"),
                                   ("y", "b.a.")], "cluster string, resource_name string")
    found = {(r.cluster, r.resource_name): (r.owner, r.owner_origin) for r in owners(names, tenancy, "topic").collect()}
    assert found == {("y", "a.b.c"): ("inner", "own"), ("x", "a.b.c"): ("replica", "remote"),
                     ("y", "a.c"): ("outer", "own"), ("y", "a."): ("outer", "own"), ("y", "a"): (None, None),
                     ("y", "b.a."): (None, None)}



def test_the_owner_lookup_runs_once_a_row_whatever_filters_follow(spark):
    """Filters on the owner stay above the lookup. Spark's optimizer copies a projected expression into each
    filter it pushes below the projection, and the lookup (a hash per prefix length, for the cluster's key and
    the every-cluster key) ran three times a row in ACL_PREFIX_OVERLAP, whose owner is filtered twice. Counted
    in the optimized plan: one lookup holds two hash calls; three copies held six."""
    from pyspark.sql import functions as F

    tenancy = tenancy_frames(spark, {"tenant_prefixes": [("outer", "topic", "a.", None, "own", None),
                                                         ("inner", "topic", "a.b.", None, "own", None)]})
    names = spark.createDataFrame([("y", "a.b.c", "outer"), ("y", "a.c", "outer"), ("y", "b", "outer")],
                                  "cluster string, resource_name string, tenant string")
    found = (owners(names, tenancy, "topic").filter(F.col("owner").isNotNull())
             .filter(F.col("owner") != F.col("tenant")))
    assert found._jdf.queryExecution().optimizedPlan().toString().count("hash(concat(") == 2
    assert [(r.resource_name, r.owner, r.owner_prefix) for r in found.collect()] == [("a.b.c", "inner", "a.b.")]

def test_owned_resources_are_read_from_their_data_not_from_the_lookup_that_computed_them(spark):
    """Several checks read the owned resources in many stages: each of those tasks carried the plan that
    computed them, the ownership lookup (a literal the size of every declared prefix) included, while they were
    cached; checkpointed, their plan is their data. Computed once for several threads (run_checks' pool)."""
    tenancy = tenancy_frames(spark, {"tenant_prefixes": [("outer", "topic", "a.", None, "own", None),
                                                         ("inner", "topic", "a.b.", None, "own", None)]})
    snapshot = snapshot_frames(spark, {"topics": [("y", "a.b.c", 1), ("y", "a.c", 1), ("y", "b", 1)]})
    with ThreadPoolExecutor(4) as pool:
        frames = list(pool.map(lambda _: owned_resources(snapshot, tenancy), range(4)))
    assert all(frame is frames[0] for frame in frames)
    plan = frames[0]._jdf.queryExecution().optimizedPlan().toString()
    assert "hash(" not in plan and "from_json" not in plan and "a.b." not in plan, plan
    assert sorted((r.resource_name, r.owner) for r in frames[0].collect()) == [
        ("a.b.c", "inner"), ("a.c", "outer"), ("b", None)]


# The planted-leak estate (LEAKS) is judged against examples/acme, which sizes no flow: a check about sized flows
# cannot fire there, and is tested on the sized acme repo instead (below, and audits/<check>/ fixtures).
SIZED_ONLY = {"MM2_PRINCIPAL_WITHOUT_QUOTA"}


def test_every_check_has_a_test_here():
    source = Path(__file__).read_text()
    assert all(f"def test_{check_id.lower()}(" in source for check_id in CHECKS)
    assert set(CHECKS) - SIZED_ONLY <= set(LEAKS)
    assert set(CHECKS) >= SIZED_ONLY


# --- MM2_PRINCIPAL_WITHOUT_QUOTA: on the sized acme repo (examples/acme sizes no flow) ---------------------

def test_mm2_principal_without_quota(spark, tmp_path):
    """A sized flow's MM2 principal without its quota, or above it, is reported per key; a neighbour's quota
    and a key mm2gov does not own are not findings."""
    from tests.tools.capacity import CAPACITY_YAML, FLOW, PAYMENTS_CAPACITY, acme_with

    inventory, resolved = decided(acme_with(tmp_path, CAPACITY_YAML, PAYMENTS_CAPACITY))
    mm2 = mm2_principal(FLOW)
    snapshot = snapshot_frames(spark, {"quotas": [
        ("cloud", mm2, "producer_byte_rate", 50000000.0), ("onprem", mm2, "controller_mutation_rate", 7.0),
        ("cloud", "User:neighbour", "consumer_byte_rate", 1.0)]})
    found = CHECKS["MM2_PRINCIPAL_WITHOUT_QUOTA"].detect(snapshot, build_tenancy(spark, resolved,
                                                                                  inventory.clusters)).collect()
    by_cluster = {f.cluster: {**f.asDict(), "evidence": json.loads(f.evidence)} for f in found}
    assert sorted(by_cluster) == ["cloud", "onprem"] and len(found) == 2
    onprem, cloud = by_cluster["onprem"], by_cluster["cloud"]
    assert (onprem["tenant"], onprem["principal"], onprem["resource_type"], onprem["resource_name"],
            onprem["severity"]) == ("payments", mm2, "QUOTA", "consumer_byte_rate", "medium")
    assert onprem["message"] == (f"{mm2} (MM2 of flow {FLOW}) has no consumer_byte_rate quota on onprem; the repo "
                                 "sets 25,000,000 per broker: its catch-up is not held to its share")
    assert cloud["message"] == (f"{mm2} (MM2 of flow {FLOW}) has producer_byte_rate 50,000,000 on cloud, above the "
                                "repo's 8,333,334 per broker: its catch-up is not held to its share")
    assert onprem["evidence"] == {"flow_id": FLOW, "key": "consumer_byte_rate", "wanted": 25000000.0}
    assert cloud["evidence"] == {"flow_id": FLOW, "key": "producer_byte_rate", "wanted": 8333334.0,
                                 "live": 50000000.0}
    assert REACH not in cloud["evidence"]
