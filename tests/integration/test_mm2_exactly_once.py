"""Exactly-once delivery per flow (KIP-618) through a crash, on real brokers with real MirrorMaker 2s.

Two tenants between the same clusters, each flow exactly as `mm2gov generate` writes it (only MM2's intervals
shortened) with the ACLs `mm2gov apply` grants: one `delivery: exactly_once`, one `at_least_once`. A producer
thread writes 20,000 records with unique values to a 3-partition topic of each tenant; mid-stream both MM2s
are killed with SIGKILL and started again. Once the targets caught up, the real audit's REPLICATION_GAP and an
independent read of the targets (read_committed) agree: the exactly-once flow has every record once, the
at-least-once flow has every record, and the duplicates the crash made are the ones the audit counts.
The exactly-once MM2 holds only its own transactional ids, nothing on CLUSTER; the broker refuses it any other.
"""

from __future__ import annotations

import copy
import json
import logging
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from confluent_kafka import KafkaException, Producer

from devstack.mirrormaker import MirrorMaker
from devstack.repo import write_stack_repo
from governance.kafka.admin import admin_client, create_acls, create_topics, delete_acls, describe_acls
from governance.model.acl import AclBinding
from governance.model.names import flow_id, mm2_principal, mm2_transactional_ids, mm2_user, scram_secret
from governance.secrets.store import DirSecretStore
from tests.conftest import run_cli
from tests.integration.feeder import Feeder, value
from tests.integration.test_replication_policy import paced
from tests.tools.offsets import deepest_partition, read_to_end, total_end_offset
from tests.tools.wait import wait_for

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

log = logging.getLogger(__name__)

# 20,000 records per tenant suffice: both MM2s are killed once each has copied KILLED_AFTER records while the
# producer is still writing (asserted), so the crash interrupts running transactions (exactly-once) and leaves
# records copied since the last offset flush to be sent again (at-least-once: duplicates > 0 is asserted).
# More records only lengthen the stream before and after the crash, which no assertion needs.
RECORDS = 20_000
PARTITIONS = 3
BATCH = 500
PACE_SECONDS = 0.15  # between batches: ~3,300 records/s, so the crash lands mid-stream
KILLED_AFTER = 3_000  # records on each target when both MM2s are killed
# at-least-once commits source offsets every 2 s (the worker's default is 60 s), so a crash re-sends what
# was copied since the last flush rather than everything; exactly-once commits them in each transaction
FLUSH = {"target.offset.flush.interval.ms": "2000"}


def read_all(config: dict[str, Any], topic: str, isolation: str = "read_committed") -> tuple[list[bytes], int]:
    """Every record of `topic` to its end (values), and the sum of its partitions' end offsets."""
    records, ends = read_to_end(config, topic, range(PARTITIONS), isolation)
    return [value for *_, value in records], sum(ends.values())


def copied(config: dict[str, Any], topic: str) -> int:
    """The sum of `topic`'s end offsets (records and, on an exactly-once target, transaction markers)."""
    return total_end_offset(config, topic, range(PARTITIONS))


def caught_up(config: dict[str, Any], topic: str, tenant: str) -> bool:
    """The target holds every record's value (read_committed), however often."""
    values, _ = read_all(config, topic)
    return set(values) >= {value(tenant, i) for i in range(RECORDS)}


@pytest.fixture(scope="module")
def crashed(stack, audit_in_process, tmp_path_factory) -> Iterator[dict[str, Any]]:
    run = uuid.uuid4().hex[:5]
    eos, alo = f"eos{run}", f"alo{run}"  # shared brokers: fresh tenants, same source and target
    root = tmp_path_factory.mktemp("exactly-once")
    repo, secrets, out = root / "repo", root / "secrets", root / "out"
    write_stack_repo(stack, repo, [eos, alo])
    tenant_file = repo / "tenants" / f"{eos}.yaml"
    tenant = yaml.safe_load(tenant_file.read_text())
    tenant["flows"][0]["delivery"] = "exactly_once"
    tenant_file.write_text(yaml.safe_dump(tenant))
    stack.export_secret_store(secrets)
    source, target = stack.kafka["source"], stack.kafka["target"]
    topics = {name: f"{name}.events" for name in (eos, alo)}
    create_topics(admin_client(source.admin_config()), topics.values(), partitions=PARTITIONS)
    applied = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
    assert applied.returncode == 0, applied.stderr
    generated = run_cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr

    flows = {name: flow_id(name, "source", "target") for name in (eos, alo)}
    properties = {}
    for name, flow in flows.items():
        path = root / f"{flow}.properties"
        path.write_text(paced((out / "mm2" / f"{flow}.properties").read_text()) + "".join(
            f"{k}={v}\n" for k, v in FLUSH.items()))
        properties[name] = path

    feeder = Feeder(source.admin_config(), topics, partitions=PARTITIONS, batch=BATCH, pace=PACE_SECONDS,
                    records=RECORDS)
    started: list[str] = []
    remotes = {name: f"source.{topic}" for name, topic in topics.items()}
    try:
        for name, flow in flows.items():
            stack.start_mirrormaker(flow, properties[name])
            started.append(flow)
        # each MM2 creates its remote topic before its task starts: from then on the stream is copied as it comes
        wait_for("both remote topics created", lambda: set(remotes.values()) <= set(
            admin_client(target.admin_config()).list_topics(timeout=10).topics), 120)
        feeder.start()
        wait_for(f"{KILLED_AFTER} records copied by each MM2", lambda: feeder.error or all(
            copied(target.admin_config(), remote) >= KILLED_AFTER for remote in remotes.values()), 300)
        for flow in flows.values():
            stack.kill_mirrormaker(flow)
            started.remove(flow)
        killed_at = feeder.produced
        assert killed_at < RECORDS, "the producer ended before the crash: nothing was in flight"
        for name, flow in flows.items():
            stack.start_mirrormaker(flow, properties[name])
            started.append(flow)
        feeder.join(600)
        assert feeder.error is None, feeder.error
        assert feeder.produced == RECORDS
        for name in flows:
            wait_for(f"source.{topics[name]} caught up", lambda name=name: caught_up(
                target.admin_config(), f"source.{topics[name]}", name), 300)
    finally:
        for flow in started:
            stack.stop_mirrormaker(flow)
    audit_out = root / "audit"
    window = deepest_partition(*[(source.admin_config(), t) for t in topics.values()],
                               *[(target.admin_config(), r) for r in remotes.values()])
    # in this process on the session's warm SparkSession (tests/tools/in_process.py says why)
    audited = audit_in_process(str(repo), "--out", str(audit_out), "--secrets-dir", str(secrets),
                               "--check", "REPLICATION_GAP", "--records-per-partition", str(window),
                               "--format", "json")
    assert audited.returncode in (0, 1), audited.stderr[-3000:]
    yield {"tenants": {"exactly_once": eos, "at_least_once": alo}, "topics": topics, "flows": flows,
           "killed_at": killed_at, "target": target, "secrets": secrets, "repo": repo, "properties": properties,
           "audit": json.loads((audit_out / "audit.json").read_text())}


def audit_counts(document: dict[str, Any], remote_topic: str) -> dict[str, int]:
    """The audit's REPLICATION_GAP findings of one remote topic, `missing` and `duplicated` summed."""
    findings = [f for f in document["findings"] if f["check_id"] == "REPLICATION_GAP"
                and f["resource_name"] == remote_topic]
    return {key: sum(int(f["evidence"][key]) for f in findings) for key in ("missing", "duplicated")}


def independent_counts(crashed: dict[str, Any], tenant: str) -> dict[str, int]:
    values, end_offsets = read_all(crashed["target"].admin_config(), f"source.{crashed['topics'][tenant]}")
    copies = Counter(values)
    expected = {value(tenant, i) for i in range(RECORDS)}
    return {"records": len(values), "distinct": len(copies), "end_offsets": end_offsets,
            "missing": len(expected - set(copies)), "duplicated": sum(n - 1 for n in copies.values()),
            "foreign": len(set(copies) - expected)}


def test_exactly_once_flow_has_every_record_once_through_a_crash(crashed):
    tenant = crashed["tenants"]["exactly_once"]
    remote = f"source.{crashed['topics'][tenant]}"
    mine, audited = independent_counts(crashed, tenant), audit_counts(crashed["audit"], remote)
    uncommitted, _ = read_all(crashed["target"].admin_config(), remote, "read_uncommitted")
    log.warning("exactly_once %s (killed at %d produced): target %s, aborted copies %d, audit %s",
                remote, crashed["killed_at"], mine, len(uncommitted) - mine["records"], audited)
    assert (mine["records"], mine["distinct"], mine["missing"], mine["duplicated"], mine["foreign"]) == (
        RECORDS, RECORDS, 0, 0, 0), mine
    assert audited == {"missing": 0, "duplicated": 0}, (audited, mine)
    # transactional writes: commit markers (and any aborted batch) take offsets no committed record has
    assert mine["end_offsets"] > mine["records"], mine


def test_at_least_once_flow_loses_nothing_and_the_audit_counts_its_duplicates(crashed):
    tenant = crashed["tenants"]["at_least_once"]
    remote = f"source.{crashed['topics'][tenant]}"
    mine, audited = independent_counts(crashed, tenant), audit_counts(crashed["audit"], remote)
    log.warning("at_least_once %s (killed at %d produced): target %s, audit %s",
                remote, crashed["killed_at"], mine, audited)
    assert (mine["distinct"], mine["missing"], mine["foreign"]) == (RECORDS, 0, 0), mine
    assert mine["duplicated"] > 0, f"the crash re-sent nothing, so this run shows nothing: {mine}"
    assert audited == {"missing": 0, "duplicated": mine["duplicated"]}, (audited, mine)
    assert mine["end_offsets"] == mine["records"], mine  # no transaction markers: not transactional


def test_the_exactly_once_mm2_holds_only_its_own_transactional_ids(crashed):
    """What `apply` granted on the target: the flow's task prefix and leader id, nothing on CLUSTER; the other
    flow's MM2 gets no transactional id at all. The broker lets the MM2 principal initialise transactions
    as its own ids and refuses it `connect-cluster-` alone, another flow's ids and any other name."""
    target, store = crashed["target"], DirSecretStore(crashed["secrets"])
    eos, alo = (crashed["flows"][crashed["tenants"][k]] for k in ("exactly_once", "at_least_once"))
    acls = describe_acls(admin_client(target.admin_config()))
    ids, other = mm2_transactional_ids(eos), mm2_transactional_ids(alo)
    granted = {(b.principal, b.resource_name, b.pattern_type, b.operation) for b in acls
               if b.resource_type == "TRANSACTIONAL_ID" and b.principal in (mm2_principal(eos), mm2_principal(alo))}
    assert granted == {(mm2_principal(eos), name, pattern, op) for name, pattern in
                       ((ids.tasks, "PREFIXED"), (ids.leader, "LITERAL")) for op in ("WRITE", "DESCRIBE")}
    assert not [b for b in acls if b.resource_type == "CLUSTER" and b.principal == mm2_principal(eos)]

    user = mm2_user(eos)
    config = target.client_config(user, store.get(scram_secret("target", f"User:{user}"), "password"))
    allowed = [f"{ids.tasks}MirrorSourceConnector-0", ids.leader]
    refused = ["connect-cluster-", f"{other.tasks}MirrorSourceConnector-0", other.leader,
               f"{ids.leader}-x", "mm2gov.", "*"]
    assert {name: init_transactions(config, name) for name in allowed} == dict.fromkeys(allowed, "")
    answers = {name: init_transactions(config, name) for name in refused}
    assert all("TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in answer for answer in answers.values()), answers


def init_transactions(config: dict[str, Any], transactional_id: str) -> str:
    """The broker's answer to InitProducerId for `transactional_id`: "" when allowed, else the error name."""
    producer = Producer({**config, "transactional.id": transactional_id})
    try:
        producer.init_transactions(30)
    except KafkaException as exc:
        return exc.args[0].name()
    return ""


def test_the_exactly_once_mm2_is_refused_without_either_transactional_grant(stack, crashed):
    """Each of the two grants is needed: without the leader's literal id, or without the tasks' prefix, the
    broker refuses the MM2's transactional producer (TransactionalIdAuthorizationException in its log)."""
    tenant = crashed["tenants"]["exactly_once"]
    flow, properties = crashed["flows"][tenant], crashed["properties"][tenant]
    admin = admin_client(crashed["target"].admin_config())
    principal, ids = mm2_principal(flow), mm2_transactional_ids(flow)
    log_path = MirrorMaker(flow, properties, stack.run_dir).log_path
    for name, pattern in ((ids.leader, "LITERAL"), (ids.tasks, "PREFIXED")):
        grants = [AclBinding(principal, "TRANSACTIONAL_ID", name, pattern, op) for op in ("WRITE", "DESCRIBE")]
        delete_acls(admin, grants)
        start = log_path.stat().st_size
        try:
            stack.start_mirrormaker(flow, properties)
            wait_for(f"the broker refusing {name} to {principal}", lambda start=start: refused_since(log_path, start),
                     120)
        finally:
            if flow in stack.mirrormakers:
                stack.stop_mirrormaker(flow)
            create_acls(admin, grants)


def test_apply_takes_the_transactional_ids_back_when_the_flow_turns_at_least_once(crashed):
    """The flow switched to at_least_once: `mm2gov apply` deletes its MM2's transactional-id bindings."""
    tenant = crashed["tenants"]["exactly_once"]
    principal = mm2_principal(crashed["flows"][tenant])
    tenant_file = crashed["repo"] / "tenants" / f"{tenant}.yaml"
    exactly_once = tenant_file.read_text()
    document = yaml.safe_load(exactly_once)
    document["flows"][0]["delivery"] = "at_least_once"
    tenant_file.write_text(yaml.safe_dump(document))
    try:
        applied = run_cli("apply", str(crashed["repo"]), "--secrets-dir", str(crashed["secrets"]))
        assert applied.returncode == 0, applied.stderr
        acls = describe_acls(admin_client(crashed["target"].admin_config()))
        assert not [b for b in acls if b.principal == principal and b.resource_type == "TRANSACTIONAL_ID"]
        assert [b for b in acls if b.principal == principal and b.resource_type == "TOPIC"]
    finally:  # and back: exactly_once again gives them back (the other tests here read them, in any order)
        tenant_file.write_text(exactly_once)
        applied = run_cli("apply", str(crashed["repo"]), "--secrets-dir", str(crashed["secrets"]))
    assert applied.returncode == 0, applied.stderr
    acls = describe_acls(admin_client(crashed["target"].admin_config()))
    assert len([b for b in acls if b.principal == principal and b.resource_type == "TRANSACTIONAL_ID"]) == 4


def refused_since(log: Path, start: int) -> bool:
    with open(log, "rb") as text:
        text.seek(start)
        return b"TransactionalIdAuthorizationException" in text.read()


def test_strimzi_objects_are_valid_and_admitted_and_hold_each_flow_to_its_delivery(stack, tmp_path):
    """The KafkaMirrorMaker2s and KafkaUsers `generate` writes for both deliveries: Strimzi's CRDs on the real
    kube-apiserver accept them, mm2gov's admission (the real OPA) admits them, and refuses an at_least_once
    flow's MM2 that turns transactions on, an exactly_once flow's that reads uncommitted records, and a
    transactional-id ACL that is not the flow's own."""
    from kubernetes import client

    from governance.admission.decider import AdmissionDecider
    from governance.admission.envelope import parse_review
    from governance.policy.bundle import builtin_modules
    from governance.policy.opa import OpaEngine
    from tests.tools.namespaces import StaticNamespaces

    run = uuid.uuid4().hex[:5]
    eos, alo = f"seos{run}", f"salo{run}"
    namespaces = {"source": f"kafka-source-{run}", "target": f"kafka-target-{run}"}
    repo, out = tmp_path / "repo", tmp_path / "out"
    write_stack_repo(stack, repo, [eos, alo], strimzi_namespaces=namespaces)
    tenant_file = repo / "tenants" / f"{eos}.yaml"
    tenant = yaml.safe_load(tenant_file.read_text())
    tenant["flows"][0]["delivery"] = "exactly_once"
    tenant_file.write_text(yaml.safe_dump(tenant))
    generated = run_cli("generate", str(repo), "--out", str(out))
    assert generated.returncode == 0, generated.stderr
    objects = [yaml.safe_load(p.read_text()) for p in sorted((out / "strimzi").glob("*.yaml"))]
    target_ns = namespaces["target"]
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in objects if o["metadata"]["namespace"] == target_ns}
    eos_flow, alo_flow = flow_id(eos, "source", "target"), flow_id(alo, "source", "target")
    eos_mm2, alo_mm2 = by_name[("KafkaMirrorMaker2", eos_flow)], by_name[("KafkaMirrorMaker2", alo_flow)]
    assert eos_mm2["spec"]["target"]["config"]["exactly.once.source.support"] == "enabled"
    assert {k: eos_mm2["spec"]["mirrors"][0]["sourceConnector"]["config"][k] for k in (
        "exactly.once.support", "source.consumer.isolation.level")} == {
        "exactly.once.support": "required", "source.consumer.isolation.level": "read_committed"}
    assert "exactly.once.source.support" not in alo_mm2["spec"]["target"]["config"]
    assert "source.consumer.isolation.level" not in alo_mm2["spec"]["mirrors"][0]["sourceConnector"]["config"]
    ids = mm2_transactional_ids(eos_flow)
    eos_user = by_name[("KafkaUser", mm2_user(eos_flow))]
    assert [(a["resource"]["name"], a["resource"]["patternType"], a["operations"]) for a in eos_user["spec"][
        "authorization"]["acls"] if a["resource"]["type"] == "transactionalId"] == [
        (ids.leader, "literal", ["Describe"]), (ids.leader, "literal", ["Write"]),
        (ids.tasks, "prefix", ["Describe"]), (ids.tasks, "prefix", ["Write"])]
    assert not [a for o in objects if o["kind"] == "KafkaUser" and o is not eos_user
                for a in o["spec"]["authorization"]["acls"] if a["resource"]["type"] == "transactionalId"]

    core, api = client.CoreV1Api(stack.kube.client()), client.CustomObjectsApi(stack.kube.client())
    for namespace in namespaces.values():
        core.create_namespace({"metadata": {"name": namespace}})
    plurals = {"KafkaMirrorMaker2": "kafkamirrormaker2s", "KafkaUser": "kafkausers", "KafkaTopic": "kafkatopics"}
    for obj in objects:
        created = api.create_namespaced_custom_object("kafka.strimzi.io", "v1", obj["metadata"]["namespace"],
                                                      plurals[obj["kind"]], obj)
        assert created["metadata"]["uid"]

    alo_eos_on = copy.deepcopy(alo_mm2)
    alo_eos_on["spec"]["target"]["config"]["exactly.once.source.support"] = "enabled"
    eos_uncommitted = copy.deepcopy(eos_mm2)
    del eos_uncommitted["spec"]["mirrors"][0]["sourceConnector"]["config"]["source.consumer.isolation.level"]
    alo_user = copy.deepcopy(by_name[("KafkaUser", mm2_user(alo_flow))])
    other = mm2_transactional_ids(alo_flow)
    alo_user["spec"]["authorization"]["acls"].append(
        {"resource": {"type": "transactionalId", "name": other.tasks, "patternType": "prefix"},
         "operations": ["Write"], "host": "*"})
    eos_wide = copy.deepcopy(eos_user)
    eos_wide["spec"]["authorization"]["acls"].append(
        {"resource": {"type": "transactionalId", "name": "connect-cluster-", "patternType": "prefix"},
         "operations": ["Write"], "host": "*"})
    with OpaEngine(builtin_modules()) as engine:
        decider = AdmissionDecider(repo, engine.url, StaticNamespaces({n: {} for n in namespaces.values()}))
        try:
            assert decider.sync.load(), decider.readiness()
            verdicts = {(o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]):
                        decider.decide(parse_review(admission_review(o))) for o in objects}
            refused = {what: decider.decide(parse_review(admission_review(obj))) for what, obj in (
                ("alo_eos_on", alo_eos_on), ("eos_uncommitted", eos_uncommitted), ("alo_user", alo_user),
                ("eos_wide", eos_wide))}
        finally:
            decider.stop()
    assert {key: v.violations for key, v in verdicts.items() if not v.allowed} == {}
    assert {what: sorted({v["rule"] for v in verdict.violations}) for what, verdict in refused.items()} == {
        "alo_eos_on": ["admission_mm2_delivery"], "eos_uncommitted": ["admission_mm2_delivery"],
        "alo_user": ["admission_user_acl_operation"], "eos_wide": ["admission_user_acl_operation"]}


def admission_review(obj: dict[str, Any]) -> bytes:
    """A CREATE AdmissionReview of `obj`, as the API server sends it."""
    request = {"uid": uuid.uuid4().hex, "operation": "CREATE", "name": obj["metadata"]["name"],
               "namespace": obj["metadata"]["namespace"], "object": obj,
               "kind": {"group": "kafka.strimzi.io", "version": "v1", "kind": obj["kind"]}}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()
