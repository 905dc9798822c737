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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from governance.config import load_inventory
from governance.model.names import flow_id, mm2_internal_prefix, mm2_principal
from spark_audit.catalog import SEVERITIES, meta
from spark_audit.checks import CHECKS, REACH_CHECKS
from spark_audit.evidence import REACH, REACH_UNKNOWN, reach_of
from spark_audit.findings import COLUMNS
from spark_audit.model import acl_row, snapshot_frames, tenancy_frames
from spark_audit.ownership import owners
from spark_audit.report import AuditRun, access_matrix
from spark_audit.run import run_checks
from spark_audit.tenancy import build_tenancy
from tests.conftest import REPO_ROOT, run_cli

ACME = REPO_ROOT / "examples" / "acme"
CLUSTERS = ("onprem", "cloud", "onprem-dr")
# Derived names of the flows to onprem-dr (the model encodes the '-' of a cluster alias)
PAYMENTS_DR_INTERNAL = mm2_internal_prefix(flow_id("payments", "onprem", "onprem-dr"))
RISK_DR_INTERNAL = mm2_internal_prefix(flow_id("risk", "onprem", "onprem-dr"))
RISK_DR_MM2 = mm2_principal(flow_id("risk", "onprem", "onprem-dr"))

TOPICS = {
    "onprem": ["payments.orders", "payments.refunds", "payments.public.prices", "marketing.campaigns",
               "marketing.leads.eu", "hr.staff", "risk.exposures", "risk.limits.daily", "logistics.shipments",
               "__consumer_offsets", "_schemas", "mm2gov.ownership"],
    "cloud": ["onprem.payments.orders", "onprem.payments.refunds", "onprem.payments.public.prices",
              "onprem.marketing.campaigns", "onprem.marketing.leads.eu", "logistics.shipments",
              "mm2gov.payments-onprem-to-cloud.configs", "mm2gov.payments-onprem-to-cloud.offsets",
              "mm2gov.payments-onprem-to-cloud.status", "mm2gov.marketing-onprem-to-cloud.configs",
              "mm2gov.logistics-onprem-to-cloud.configs", "__consumer_offsets", "mm2gov.ownership"],
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
    return build_tenancy(spark, load_inventory(ACME))


def plus(base: dict[str, list[tuple]], **extra: list[tuple]) -> dict[str, list[tuple]]:
    return {table: [*rows, *extra.get(table, [])] for table, rows in base.items()}


def keys(found: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
    return {(f["tenant"], f["cluster"], f["resource_name"], f["principal"]) for f in found}


def by_resource(found: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(f["resource_name"], f["principal"]): f for f in found}


def reach(found: list[dict[str, Any]]) -> dict[tuple[str, str, str], list[tuple[str, str]]]:
    """(cluster, resource, principal) -> the (accessor, owner) pairs its evidence states."""
    return {(f["cluster"], f["resource_name"], f["principal"]): reach_of(f["evidence"]) for f in found}


# Per check: rows added to the clean snapshot, rows taken out of it, and the partial flags.
LEAKS: dict[str, dict[str, list[tuple]]] = {}
DROPPED: dict[str, Callable[[str, tuple], bool]] = {}
PARTIAL: dict[str, tuple[str, ...]] = {}


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
            found = CHECKS[name.split(":")[0]].detect(snapshot, tenancy).collect()
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
]}


def test_acl_wildcard(results):
    found = results["ACL_WILDCARD"]
    assert keys(found) == {("", "onprem", "kafka-cluster", "User:*"), ("payments", "cloud", "*", "User:payments-app")}
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


LEAKS["INTERNAL_TOPIC_EXPOSED"] = {
    "topics": [("cloud", "mm2-offset-syncs.cloud.internal", 1), ("cloud", "heartbeats", 1)],
    "acls": [
        allow("cloud", "User:marketing-app", "READ", "TOPIC", "mm2gov.payments-onprem-to-cloud."),
        allow("cloud", "User:mm2-payments-onprem-to-cloud", "WRITE", "TOPIC", "mm2-offset-syncs.cloud.internal",
              "LITERAL"),
        allow("cloud", "User:mm2-marketing-onprem-to-cloud", "READ", "TOPIC", "mm2-offset-syncs."),
        allow("cloud", "User:legacy-mm2", "ALL", "TOPIC", "heartbeats", "LITERAL"),
        allow("cloud", "User:admin", "ALL", "TOPIC", "*", "LITERAL"),
        allow("cloud", "User:hr-app", "DESCRIBE", "TOPIC", "mm2gov."),  # describe only: names, not contents
    ],
}


def test_internal_topic_exposed(results):
    found = results["INTERNAL_TOPIC_EXPOSED"]
    assert keys(found) == {
        ("marketing", "cloud", "mm2gov.payments-onprem-to-cloud.configs", "User:marketing-app"),
        ("marketing", "cloud", "mm2gov.payments-onprem-to-cloud.offsets", "User:marketing-app"),
        ("marketing", "cloud", "mm2gov.payments-onprem-to-cloud.status", "User:marketing-app"),
        ("", "cloud", "heartbeats", "User:legacy-mm2"),
        ("", "cloud", "mm2-offset-syncs.cloud.internal", ""),
    }
    shared = by_resource(found)[("mm2-offset-syncs.cloud.internal", "")]
    assert shared["evidence"]["kind"] == "shared" and shared["evidence"]["tenants"] == ["marketing", "payments"]
    assert reach(found) == {
        ("cloud", "mm2gov.payments-onprem-to-cloud.configs", "User:marketing-app"): [("marketing", "payments")],
        ("cloud", "mm2gov.payments-onprem-to-cloud.offsets", "User:marketing-app"): [("marketing", "payments")],
        ("cloud", "mm2gov.payments-onprem-to-cloud.status", "User:marketing-app"): [("marketing", "payments")],
        ("cloud", "heartbeats", "User:legacy-mm2"): [],  # no flow owns it: said in reach_unknown
        ("cloud", "mm2-offset-syncs.cloud.internal", ""): [("marketing", "payments"), ("payments", "marketing")],
    }
    assert "no flow owns" in by_resource(found)[("heartbeats", "User:legacy-mm2")]["evidence"][REACH_UNKNOWN]


LEAKS["ACL_STALE"] = {
    "acls": [
        allow("onprem", "User:old-app", "READ", "TOPIC", "payments."),
        allow("onprem", "User:old-app", "WRITE", "TOPIC", "payments."),
        allow("onprem-dr", "User:mm2-hr-onprem-to-onprem-dr", "READ", "TOPIC", "hr."),  # no such flow
        deny("cloud", "User:ghost", "READ", "TOPIC", "payments."),  # DENY only: harmless
    ],
    "scram_users": [("onprem", "old-app"), ("cloud", "mm2")],
}


def test_acl_stale(results):
    found = results["ACL_STALE"]
    assert keys(found) == {
        ("", "onprem", "old-app", "User:old-app"),
        ("", "cloud", "mm2", "User:mm2"),
        ("", "onprem-dr", "mm2-hr-onprem-to-onprem-dr", "User:mm2-hr-onprem-to-onprem-dr"),
    }
    old = by_resource(found)[("old-app", "User:old-app")]
    assert old["evidence"]["acl_bindings"] == 2 and old["evidence"]["scram_user"] is True
    assert by_resource(found)[("mm2", "User:mm2")]["evidence"]["acl_bindings"] == 0


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


LEAKS["GROUP_CROSS_TENANT"] = {"group_offsets": [
    ("onprem", "marketing-bi", "payments.orders", 0, 42),
    ("onprem", "marketing-bi", "payments.orders", 1, 40),
    ("cloud", "risk-analytics", "onprem.payments.orders", 0, 5),
    ("onprem", "adhoc", "payments.orders", 0, 1),  # nobody's group: not this check's
]}


def test_group_cross_tenant(results):
    found = results["GROUP_CROSS_TENANT"]
    assert keys(found) == {("marketing", "onprem", "marketing-bi", ""), ("risk", "cloud", "risk-analytics", "")}
    bi = by_resource(found)[("marketing-bi", "")]
    assert bi["evidence"]["topic"] == "payments.orders" and bi["evidence"]["topic_owner"] == "payments"
    assert bi["evidence"]["offsets"] == [{"partition": 0, "offset": 42}, {"partition": 1, "offset": 40}]
    assert reach(found) == {("onprem", "marketing-bi", ""): [("marketing", "payments")],
                            ("cloud", "risk-analytics", ""): [("risk", "payments")]}


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


def test_replication_gap(results):
    found = results["REPLICATION_GAP"]
    assert keys(found) == {("payments", "cloud", "onprem.payments.orders", "User:mm2-payments-onprem-to-cloud")}
    [gap] = found
    assert gap["evidence"]["missing"] == 1 and gap["evidence"]["duplicated"] == 1
    assert gap["evidence"]["missing_source_offsets"] == [2]
    assert gap["evidence"]["duplicated_target_offsets"] == [13, 15]
    assert gap["evidence"]["window"] == {"from_ts": 1000, "to_ts": 1004}
    assert results["REPLICATION_GAP:partial"] == []  # the target's records were not all collected


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
                                "INTERNAL_TOPIC_EXPOSED": 4, "GROUP_CROSS_TENANT": 1},
    ("payments", "marketing"): {"ACL_CROSS_TENANT": 1, "ACL_PREFIX_OVERLAP": 1, "INTERNAL_TOPIC_EXPOSED": 1,
                                "RECORD_TENANT_MISMATCH": 1},
    ("logistics", "hr"): {"ACL_CROSS_TENANT": 1},
    ("logistics", "risk"): {"ACL_CROSS_TENANT": 1},
    ("logistics", "marketing"): {"ACL_PREFIX_OVERLAP": 1},
    ("logistics", "payments"): {"ACL_PREFIX_OVERLAP": 1},
    ("risk", "logistics"): {"ACL_CROSS_TENANT": 1},
    ("risk", "payments"): {"ACL_PREFIX_OVERLAP": 1, "GROUP_CROSS_TENANT": 1},
    ("hr", "risk"): {"ACL_PREFIX_OVERLAP": 1, "RECORD_TENANT_MISMATCH": 1},
    ("*", "payments"): {"ACL_CROSS_TENANT": 1},  # User:*
}


def test_the_report_matrix_counts_what_the_detectors_find(results):
    """The seam the matrix depends on: detector output straight into report.access_matrix."""
    tenants = sorted(load_inventory(ACME).tenants)
    planted = [f for name, found in results.items() if name != "PASSED" and ":" not in name for f in found]
    m = access_matrix(AuditRun(run_id="r", started="", repo="acme", clusters=list(CLUSTERS), tenants=tenants,
                               findings=planted))
    assert m["tenants"] == [*tenants, "*"]
    cells = {(a, b): n for a, row in m["counts"].items() for b, n in row.items() if n}
    assert cells == {cell: sum(checks.values()) for cell, checks in PLANTED_CELLS.items()}
    assert m["counts"]["marketing"]["payments"] == 11  # marketing reaches payments: row marketing, column payments
    assert {(a, b): checks for a, row in m["checks"].items() for b, checks in row.items()} == PLANTED_CELLS
    assert m["total"] == 25 and m["max"] == 11
    # reach that names no tenant pair is counted aside, never in a cell
    assert set(m["unattributed"]) == {"ACL_WILDCARD", "INTERNAL_TOPIC_EXPOSED", "MM2_PRINCIPAL_OVERREACH",
                                      "RECORD_TENANT_MISMATCH", "TOPIC_SCOPE_MISMATCH"}
    assert m["unattributed"]["ACL_WILDCARD"] == 2 and m["unattributed"]["TOPIC_SCOPE_MISMATCH"] == 2
    clean = access_matrix(AuditRun(run_id="c", started="", repo="acme", clusters=list(CLUSTERS), tenants=tenants,
                                   findings=results["PASSED"]))
    assert clean["total"] == 0 and clean["tenants"] == tenants


def test_findings_have_the_contract_shape(results):
    assert all(tuple(f) == COLUMNS for found in results.values() for f in found)
    assert all(f["severity"] == meta(f["check_id"]).severity for found in results.values() for f in found)


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


def test_every_check_has_a_test_here():
    source = Path(__file__).read_text()
    assert all(f"def test_{check_id.lower()}(" in source for check_id in CHECKS)
    assert set(CHECKS) <= set(LEAKS)
