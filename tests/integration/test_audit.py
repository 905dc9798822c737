"""`mm2gov audit` on the real stack with real Spark: a clean deployment has no finding above info;
each check's leak, planted on the real clusters, gives exactly the expected finding; removing the
leaks removes the findings; an unreachable cluster is exit 3 and a PARTIAL report.

Three audits share one deployment (tenants aud-a, aud-b with flows, aud-c without): clean, with
every leak planted at once, and with the leaks removed. Tenants are this module's own, on clusters
cleared of what modules before it left (tests/tools/estate.py says why). The
report's tenant x tenant access matrix (audit.json `access_matrix`) must show exactly the
cross-tenant reach of the planted leaks.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from devstack.repo import as_yaml, tenant_document, write_stack_repo
from governance.kafka.admin import (
    admin_client,
    create_acls,
    create_topics,
    delete_acls,
    delete_scram_users,
    upsert_scram_user,
)
from governance.kafka.records import Record, produce, read
from governance.model.acl import AclBinding
from governance.model.names import flow_id, mm2_flow_topics, mm2_internal_prefix, mm2_principal
from governance.secrets.names import scram_secret
from governance.secrets.store import DirSecretStore
from governance.secrets.values import random_password
from tests.conftest import REPO_ROOT, run_cli
from tests.tools.estate import clear_kafka

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

MARKERS = {"aud-a": "lob-a", "aud-b": "lob-b", "aud-c": "lob-c"}
FLOWS = {tenant: flow_id(tenant, "source", "target") for tenant in ("aud-a", "aud-b")}  # the model's names
MM2_A = mm2_principal(FLOWS["aud-a"])
INTERNAL_A = mm2_internal_prefix(FLOWS["aud-a"])  # aud-a's MM2 Connect topics on the target
CHECKPOINTS_A = mm2_flow_topics(FLOWS["aud-a"]).checkpoints  # aud-a's groups and their translated offsets
TENANT_C = """\
name: aud-c
owners: ["aud-c@example.com"]
classification: internal
topic_prefixes: ["aud-c."]
principals:
  - {name: "User:aud-c-app", access: [read]}
record_marker: {header: lob, value: lob-c}
"""

LEAK_ACLS = {
    "source": [AclBinding("User:aud-b-app", "TOPIC", "aud-a.", "PREFIXED", "READ"),  # ACL_CROSS_TENANT
               AclBinding("User:aud-c-app", "TOPIC", "*", "LITERAL", "READ"),  # ACL_WILDCARD
               AclBinding("User:aud-a-app", "TOPIC", "aud-", "PREFIXED", "DESCRIBE"),  # ACL_PREFIX_OVERLAP
               AclBinding(MM2_A, "TOPIC", "aud-b.", "PREFIXED", "READ"),  # MM2_PRINCIPAL_OVERREACH
               AclBinding("User:ghost", "TOPIC", "ghost.", "PREFIXED", "READ")],  # ACL_STALE
    "target": [AclBinding("User:aud-b-app", "TOPIC", INTERNAL_A, "PREFIXED", "READ"),  # INTERNAL_TOPIC_EXPOSED
               # the flow's checkpoints topic to another tenant (INTERNAL_TOPIC_EXPOSED, ACL_CROSS_TENANT)
               AclBinding("User:aud-c-app", "TOPIC", CHECKPOINTS_A, "LITERAL", "READ"),
               # every Connect cluster leader's transactional id to a flow's MM2 (MM2_PRINCIPAL_OVERREACH)
               AclBinding(MM2_A, "TRANSACTIONAL_ID", "connect-cluster-", "PREFIXED", "WRITE")],
}


@pytest.fixture(scope="module")
def audit(audit_in_process):
    """`mm2gov audit` in this process on the session's warm SparkSession (tests/tools/in_process.py): the
    audit as its own process runs in test_audit_cluster.py and test_image_install.py."""
    def run(repo, store, out, *extra: str):
        done = audit_in_process(str(repo), "--out", str(out), "--secrets-dir", str(store),
                                "--records-per-partition", "100", *extra)
        document = json.loads((out / "audit.json").read_text()) if (out / "audit.json").exists() else None
        return done, document
    return run


def produce_at(config: dict, topic: str, key: bytes, value: bytes, headers: list, timestamp: int) -> None:
    producer = Producer({**config, "acks": "all"})
    producer.produce(topic, value=value, key=key, headers=headers, timestamp=timestamp)
    assert producer.flush(30) == 0


@pytest.fixture(scope="module")
def deployment(stack, tmp_path_factory):
    clear_kafka(stack)  # the clean deployment is the clusters' only content
    root = tmp_path_factory.mktemp("audit")
    repo, store = root / "repo", root / "store"
    write_stack_repo(stack, repo, ["aud-a", "aud-b"])
    for name in ("aud-a", "aud-b"):
        (repo / "tenants" / f"{name}.yaml").write_text(
            as_yaml({**tenant_document(name), "record_marker": {"header": "lob", "value": MARKERS[name]}}))
    (repo / "tenants" / "aud-c.yaml").write_text(TENANT_C)
    stack.export_secret_store(store)
    for args in (("apply", str(repo), "--secrets-dir", str(store)),
                 ("generate", str(repo), "--out", str(root / "gen"), "--secrets-path", str(store))):
        done = run_cli(*args)
        assert done.returncode == 0, done.stderr
    source, target = stack.kafka["source"], stack.kafka["target"]
    create_topics(admin_client(source.admin_config()), ["aud-a.orders", "aud-b.orders"])
    for tenant in ("aud-a", "aud-b"):
        produce(source.admin_config(), f"{tenant}.orders",
                [Record(f"{tenant}-{i}".encode(), b"v", [("lob", MARKERS[tenant].encode())]) for i in range(5)]
                + [Record(f"{tenant}-unmarked".encode(), b"v", [])])  # no marker header: normal, not a finding
    for tenant in ("aud-a", "aud-b"):  # replicate with each tenant's own MM2, then stop it
        flow = FLOWS[tenant]
        stack.start_mirrormaker(flow, root / "gen" / "mm2" / f"{flow}.properties")
        try:
            password = DirSecretStore(store).get(scram_secret("target", f"User:{tenant}-app"), "password")
            done = read(target.client_config(f"{tenant}-app", password), f"source.{tenant}.orders", 6, timeout=120,
                        group=f"{tenant}-audit-check")
            assert done.error is None and len(done.records) == 6
        finally:
            stack.stop_mirrormaker(flow)
    return {"repo": repo, "store": store, "root": root}


@pytest.fixture(scope="module")
def clean(audit, deployment):
    return audit(deployment["repo"], deployment["store"], deployment["root"] / "clean")


def test_a_clean_deployment_has_no_finding_above_info(clean):
    done, document = clean
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    above = [f for f in document["findings"] if f["severity"] != "info"]
    assert above == []
    assert document["run"]["records_scanned"] >= 20
    assert document["summary"]["status"] == "clean"
    assert document["access_matrix"]["total"] == 0 and document["access_matrix"]["tenants"] == ["aud-a", "aud-b",
                                                                                                 "aud-c"]


@pytest.fixture(scope="module")
def leaky(stack, audit, deployment, clean):
    """Every check's leak at once on the real clusters, audited; then removed and audited again."""
    source, target = stack.kafka["source"], stack.kafka["target"]
    for alias, bindings in LEAK_ACLS.items():
        create_acls(admin_client(stack.kafka[alias].admin_config()), bindings)
    upsert_scram_user(admin_client(source.admin_config()), "ghost", random_password())
    create_topics(admin_client(target.admin_config()), ["orphan.topic", "source.aud-c.stolen"])  # unowned, mismatch
    # another tenant's marker in aud-a's topic, and a duplicate of a replicated record on the target
    produce(source.admin_config(), "aud-a.orders", [Record(b"smuggled", b"x", [("lob", b"lob-b")])])
    consumer = Consumer({**target.admin_config(), "group.id": f"dup-{uuid.uuid4().hex[:6]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.assign([TopicPartition("source.aud-b.orders", 0, 0)])
    message = None
    for _ in range(30):
        message = consumer.poll(1)
        if message is not None and message.error() is None:
            break
    consumer.close()
    assert message is not None and message.error() is None
    produce_at(target.admin_config(), "source.aud-b.orders", message.key(), message.value(),
               message.headers(), message.timestamp()[1])
    # a group of aud-a with offsets committed on aud-b's topic
    group = Consumer({**source.admin_config(), "group.id": "aud-a-sneaky", "enable.auto.commit": False})
    group.commit(offsets=[TopicPartition("aud-b.orders", 0, 3)], asynchronous=False)
    group.close()
    time.sleep(1)
    planted = audit(deployment["repo"], deployment["store"], deployment["root"] / "leaky")

    for alias, bindings in LEAK_ACLS.items():
        delete_acls(admin_client(stack.kafka[alias].admin_config()), bindings)
    delete_scram_users(admin_client(source.admin_config()), ["ghost"])
    target_admin, source_admin = admin_client(target.admin_config()), admin_client(source.admin_config())
    for future in target_admin.delete_topics(["orphan.topic", "source.aud-c.stolen"]).values():
        future.result(timeout=60)  # the admin clients stay referenced until their futures are done
    source_admin.delete_consumer_groups(["aud-a-sneaky"])["aud-a-sneaky"].result(timeout=60)
    removed_out = deployment["root"] / "removed"
    removed = audit(deployment["repo"], deployment["store"], removed_out, "--check", "ACL_CROSS_TENANT", "--check",
                    "ACL_WILDCARD", "--check", "ACL_PREFIX_OVERLAP", "--check", "MM2_PRINCIPAL_OVERREACH",
                    "--check", "INTERNAL_TOPIC_EXPOSED", "--check", "TOPIC_UNOWNED", "--check",
                    "TOPIC_SCOPE_MISMATCH", "--check", "GROUP_CROSS_TENANT", "--check", "ACL_STALE")
    return planted, removed


EXPECTED = [  # check, tenant, cluster, resource name, principal
    ("ACL_CROSS_TENANT", "aud-b", "source", "aud-a.orders", "User:aud-b-app"),
    ("ACL_WILDCARD", "aud-c", "source", "*", "User:aud-c-app"),
    ("ACL_PREFIX_OVERLAP", "aud-a", "source", "aud-", "User:aud-a-app"),
    ("MM2_PRINCIPAL_OVERREACH", "aud-a", "source", None, MM2_A),
    ("INTERNAL_TOPIC_EXPOSED", "aud-b", "target", None, "User:aud-b-app"),
    ("TOPIC_UNOWNED", None, "target", "orphan.topic", None),
    ("TOPIC_SCOPE_MISMATCH", None, "target", "source.aud-c.stolen", None),
    ("GROUP_CROSS_TENANT", "aud-a", "source", None, None),
    ("RECORD_TENANT_MISMATCH", None, "source", "aud-a.orders", None),
    ("ACL_STALE", None, "source", None, "User:ghost"),
    ("REPLICATION_GAP", None, "target", "source.aud-b.orders", None),
]


@pytest.mark.parametrize("check, tenant, cluster, resource, principal", EXPECTED, ids=[e[0] for e in EXPECTED])
def test_each_planted_leak_is_found_and_gone_once_removed(leaky, check, tenant, cluster, resource, principal):
    (done, document), (removed_done, removed) = leaky
    assert done.returncode == 1, done.stderr[-3000:]
    found = [f for f in document["findings"] if f["check_id"] == check and f["cluster"] == cluster
             and (tenant is None or f["tenant"] == tenant) and (resource is None or f["resource_name"] == resource)
             and (principal is None or f["principal"] == principal)]
    assert found, f"no {check} finding; {check} findings: " + json.dumps(
        [f for f in document["findings"] if f["check_id"] == check], indent=1)[:3000]
    assert all(f["message"] and f["remediation"] for f in found)
    if check in ("RECORD_TENANT_MISMATCH", "REPLICATION_GAP"):
        return  # records cannot be taken back from a Kafka log; their checks have unit tests for the clean side
    assert removed_done.returncode == 0, removed_done.stdout + removed_done.stderr[-2000:]
    assert not [f for f in removed["findings"] if f["check_id"] == check and f["severity"] != "info"]


def test_a_flows_checkpoints_and_foreign_transactional_ids_are_found_and_gone_once_removed(stack, leaky):
    """The flow's own MM2 topics and transactional ids, on the real target: aud-c's principal reading aud-a's
    checkpoints topic, and aud-a's MM2 allowed every Connect leader's transactional id."""
    (_, document), (_, removed) = leaky
    topics = admin_client(stack.kafka["target"].admin_config()).list_topics(timeout=30).topics
    assert CHECKPOINTS_A in topics  # MM2 created it under the flow's own name

    def found(doc, check, principal, resource):
        return [f for f in doc["findings"] if (f["check_id"], f["cluster"], f["principal"], f["resource_name"])
                == (check, "target", principal, resource)]

    [exposed] = found(document, "INTERNAL_TOPIC_EXPOSED", "User:aud-c-app", CHECKPOINTS_A)
    assert exposed["tenant"] == "aud-c" and exposed["evidence"]["mm2_topic"] == "checkpoints"
    assert exposed["evidence"]["flow_id"] == FLOWS["aud-a"] and exposed["evidence"]["operations"] == ["READ"]
    [txn] = found(document, "MM2_PRINCIPAL_OVERREACH", MM2_A, "connect-cluster-")
    assert txn["resource_type"] == "TRANSACTIONAL_ID" and txn["evidence"]["pattern_type"] == "PREFIXED"
    assert txn["evidence"]["operations"] == ["DESCRIBE", "WRITE"] and txn["severity"] == "high"
    for check, principal, resource in (("INTERNAL_TOPIC_EXPOSED", "User:aud-c-app", CHECKPOINTS_A),
                                       ("MM2_PRINCIPAL_OVERREACH", MM2_A, "connect-cluster-")):
        assert found(removed, check, principal, resource) == []
    # the planted duplicate: duplicates only, a low finding, with its flow's rate over the scanned window
    [dup] = [f for f in document["findings"] if f["check_id"] == "REPLICATION_GAP"]
    flow = dup["evidence"]["flow"]
    assert dup["severity"] == "low" and dup["evidence"]["missing"] == 0 and dup["evidence"]["duplicated"] == 1
    assert (flow["missing"], flow["duplicated"], flow["source_records"]) == (0, 1, 6)  # aud-b.orders: 6 records
    assert flow["duplicated_rate"] == 1 / 6 and flow["missing_rate"] == 0
    assert document["replication"] == [{
        "flow_id": FLOWS["aud-b"], "tenant": "aud-b", "target": "target", **flow, "partitions_with_gap": 1,
        "severity": "low"}]


def planted_reach(internal_topics: int) -> dict[tuple[str, str], dict[str, int]]:
    """The cross-tenant reach of LEAK_ACLS and the other planted leaks, cell by cell:
    (accessor row, owner column) -> {check: findings}. `internal_topics`: how many topics aud-a's MM2
    has under INTERNAL_A on the target (its Connect configs, offsets and status)."""
    return {
        ("aud-b", "aud-a"): {
            "ACL_CROSS_TENANT": 1 + internal_topics,  # READ 'aud-a.' -> aud-a.orders; READ INTERNAL_A -> each topic
            "ACL_PREFIX_OVERLAP": 2,  # the patterns 'aud-a.' (source) and INTERNAL_A (target) are aud-a's names
            "INTERNAL_TOPIC_EXPOSED": internal_topics,
        },
        ("aud-a", "aud-b"): {
            "ACL_CROSS_TENANT": 2,  # aud-a-app DESCRIBE via 'aud-', aud-a's MM2 READ via 'aud-b.': aud-b.orders
            "ACL_PREFIX_OVERLAP": 2,  # 'aud-' covers aud-b.; 'aud-b.' is aud-b's name
            "MM2_PRINCIPAL_OVERREACH": 1,  # aud-a's MM2 READ 'aud-b.'
            "GROUP_CROSS_TENANT": 1,  # aud-a-sneaky committed on aud-b.orders
            "RECORD_TENANT_MISMATCH": 1,  # aud-a.orders holds a record marked lob-b (aud-b's)
        },
        ("aud-a", "aud-c"): {"ACL_PREFIX_OVERLAP": 1},  # 'aud-' covers aud-c.
        # READ on LITERAL '*': aud-a.orders; READ on aud-a's checkpoints topic
        ("aud-c", "aud-a"): {"ACL_CROSS_TENANT": 2, "INTERNAL_TOPIC_EXPOSED": 1},
        ("aud-c", "aud-b"): {"ACL_CROSS_TENANT": 1},  # and aud-b.orders
    }


def test_the_access_matrix_shows_the_planted_cross_tenant_reach(stack, deployment, leaky):
    (_, document), _ = leaky
    topics = admin_client(stack.kafka["target"].admin_config()).list_topics(timeout=30).topics
    internal = sum(1 for topic in topics if topic.startswith(INTERNAL_A))
    assert internal >= 3  # configs, offsets, status
    expected = planted_reach(internal)
    m = document["access_matrix"]
    assert m["tenants"] == ["aud-a", "aud-b", "aud-c"]
    found = {(a, b): checks for a, row in m["checks"].items() for b, checks in row.items()}
    assert found == expected, json.dumps(m["checks"], indent=1)
    counts = {(a, b): n for a, row in m["counts"].items() for b, n in row.items() if n}
    assert counts == {cell: sum(checks.values()) for cell, checks in expected.items()}
    assert m["counts"]["aud-a"]["aud-b"] == 7 and m["counts"]["aud-b"]["aud-a"] == 3 + 2 * internal
    assert m["counts"]["aud-a"]["aud-a"] == 0 and m["counts"]["aud-b"]["aud-c"] == 0
    # reach no tenant pair describes is counted aside: a '*' binding, aud-c's data under no tenant's name
    assert {"ACL_WILDCARD", "TOPIC_SCOPE_MISMATCH"} <= set(m["unattributed"])
    page = (deployment["root"] / "leaky" / "report.html").read_text()
    assert "No finding shows one tenant reaching another" not in page
    assert 'title="aud-a → aud-b: 7 findings (ACL_CROSS_TENANT 2, ACL_PREFIX_OVERLAP 2, GROUP_CROSS_TENANT 1, ' \
           'MM2_PRINCIPAL_OVERREACH 1, RECORD_TENANT_MISMATCH 1)"' in page


def test_an_unreachable_cluster_is_exit_3_and_a_partial_report(audit, deployment, tmp_path):
    repo = tmp_path / "repo"
    (repo / "tenants").mkdir(parents=True)
    clusters = (deployment["repo"] / "clusters.yaml").read_text()
    source_line = next(line for line in clusters.splitlines() if "bootstrap_servers" in line)  # source comes first
    clusters = clusters.replace(source_line, '    bootstrap_servers: "127.0.0.1:1"', 1)
    (repo / "clusters.yaml").write_text(clusters)
    for tenant in ("aud-a", "aud-b", "aud-c"):
        tenant_file = f"tenants/{tenant}.yaml"
        (repo / tenant_file).write_text((deployment["repo"] / tenant_file).read_text())
    done, document = audit(repo, deployment["store"], tmp_path / "out", "--records-per-partition", "0")
    assert done.returncode == 3, done.stderr[-2000:]
    assert "error: cluster source (127.0.0.1:1) not collected" in done.stderr and "Traceback" not in done.stderr
    assert document["summary"]["status"] == "partial" and "source" in document["run"]["partial"]
    assert "PARTIAL SNAPSHOT" in (tmp_path / "out" / "report.html").read_text()


def test_a_repo_with_high_violations_is_refused_as_generate_refuses_it(audit, tmp_path):
    """The audit judges the live clusters by the policy decision, as generate compiles it: a repo the policy
    refuses (here a grant of write access, high) gets generate's answer, exit 1 with the violations, and
    nothing is collected or written."""
    bad = REPO_ROOT / "examples" / "bad" / "grant_write"
    done, document = audit(bad, tmp_path / "store", tmp_path / "out")
    generated = run_cli("generate", str(bad), "--out", str(tmp_path / "gen"))
    assert done.returncode == generated.returncode == 1, done.stderr
    assert "grant_write" in done.stderr and "refusing to act on a repo with high or critical violations" in done.stderr
    assert document is None and not (tmp_path / "out").exists()
    assert "collecting metadata" not in done.stderr and "Traceback" not in done.stderr
