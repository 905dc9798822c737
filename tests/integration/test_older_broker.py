"""Broker compatibility on real brokers (issue 16 item 3): a Kafka 3.x source replicates to the 4.x target,
and a pair the pinned MM2 cannot serve is refused before anything changes.

Real: a Kafka 3.9 broker from Maven Central (KAFKA3_VERSION, KRaft, SASL_SSL/SCRAM, StandardAuthorizer,
started here on demand, not in the shared stack), the stack's 4.x target and OPA, `mm2gov apply` and
`generate`, MirrorMaker 2 4.x in dedicated mode, and the ApiVersions both brokers answer.

Not real: no broker older than 2.1 can run here (it needs ZooKeeper and Java 8-era code), so for the refusal
`mm2gov apply` runs in this process (tests/tools/in_process.py) with the pinned MM2's API table
(governance.kafka.version.APIS) monkeypatched: the floor of one API MM2 needs on the source (ListGroups) raised
above what the real 3.9 broker answers. The broker's answer itself is real; the product has no hook for this.
The refusal of a real Kafka 2.0 broker's answer is covered in tests/unit/test_broker_version.py.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from devstack import tools
from devstack.kafka import ADMIN_USER, KafkaCluster
from devstack.process import free_port
from devstack.repo import as_yaml, tenant_yaml, write_stack_repo
from devstack.stack import CA_SECRET_NAME
from governance.kafka import version
from governance.kafka.admin import admin_client, create_topics, describe_acls, scram_users
from governance.kafka.records import Record, produce, read
from governance.model.names import flow_id
from governance.secrets.store import DirSecretStore
from governance.secrets.values import SecretValue, random_password
from tests.conftest import run_cli
from tests.integration.test_replication_policy import paced
from tests.tools.in_process import run_in_process

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

RECORDS = 25
LEGACY = "legacy"


@pytest.fixture(scope="module")
def legacy(stack, tmp_path_factory) -> Iterator[KafkaCluster]:
    """A Kafka 3.x broker, secured like the stack's 4.x brokers and trusting the same CA."""
    cluster = KafkaCluster(
        name=LEGACY, run_dir=tmp_path_factory.mktemp("kafka3"), ca=stack.ca, ca_pem_path=stack.ca_pem_path,
        admin_password=random_password(), controller_password=random_password(), store_password=random_password(),
        port=free_port(), controller_port=free_port(), distribution=tools.kafka3(),
    )
    try:
        cluster.start()
        yield cluster
    finally:
        if cluster.process:
            cluster.process.stop()


def legacy_clusters_yaml(stack, legacy: KafkaCluster) -> str:
    document = stack.governance_clusters_document()
    document["clusters"][LEGACY] = {
        "bootstrap_servers": legacy.bootstrap_servers, "zone": "onprem",
        "security": {"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "ca_secret": CA_SECRET_NAME,
                     "admin_credentials_secret": f"{LEGACY}-admin"}}
    return as_yaml(document)


@pytest.fixture(scope="module")
def repo(stack, legacy, tmp_path_factory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("older-broker")
    repo, secrets = root / "repo", root / "secrets"
    tenant = f"old{uuid.uuid4().hex[:5]}"
    write_stack_repo(stack, repo, [])
    (repo / "clusters.yaml").write_text(legacy_clusters_yaml(stack, legacy))
    (repo / "tenants" / f"{tenant}.yaml").write_text(tenant_yaml(tenant, source=LEGACY, target="target"))
    stack.export_secret_store(secrets)
    store = DirSecretStore(secrets)
    store.put(f"{LEGACY}-admin", "username", SecretValue(ADMIN_USER))
    store.put(f"{LEGACY}-admin", "password", legacy.admin_password)
    return {"root": root, "repo": repo, "secrets": secrets, "tenant": tenant}


def live_state(config: dict[str, Any]) -> tuple[frozenset, frozenset]:
    admin = admin_client(config)
    return frozenset(describe_acls(admin)), frozenset(scram_users(admin))


def test_a_3x_source_replicates_to_the_4x_target(stack, legacy, repo):
    tenant, out = repo["tenant"], repo["root"] / "out"
    topic, flow = f"{tenant}.orders", flow_id(tenant, LEGACY, "target")
    create_topics(admin_client(legacy.admin_config()), [topic])
    produce(legacy.admin_config(), topic, [Record(f"k{i}".encode(), f"v{i}".encode(), []) for i in range(RECORDS)])

    applied = run_cli("apply", str(repo["repo"]), "--secrets-dir", str(repo["secrets"]))
    assert applied.returncode == 0, applied.stderr
    # the check read the real 3.9 broker's ApiVersions and finalized metadata.version, and let it pass
    assert f"cluster {LEGACY} (source): metadata.version 3.9-IV0 (level 21), compatible" in applied.stderr
    assert "cluster target (target): metadata.version 4." in applied.stderr
    doctor = run_cli("doctor", "--repo", str(repo["repo"]), "--secrets-dir", str(repo["secrets"]))
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert f"ok   cluster {LEGACY} (source): metadata.version 3.9-IV0 (level 21)" in doctor.stdout
    generated = run_cli("generate", str(repo["repo"]), "--out", str(out), "--secrets-path", str(repo["secrets"]))
    assert generated.returncode == 0, generated.stderr

    properties = repo["root"] / f"{flow}.properties"
    properties.write_text(paced((out / "mm2" / f"{flow}.properties").read_text()))
    stack.start_mirrormaker(flow, properties)
    try:
        mirrored = read(stack.kafka["target"].admin_config(), f"{LEGACY}.{topic}", RECORDS, timeout=120)
    finally:
        stack.stop_mirrormaker(flow)
    assert sorted(r.value for r in mirrored.records) == sorted(f"v{i}".encode() for i in range(RECORDS))


def test_an_unserved_pair_is_refused_before_anything_changes(stack, legacy, repo, monkeypatch):
    newcomer = f"new{uuid.uuid4().hex[:5]}"  # a tenant whose grants and users apply would otherwise create
    (repo["repo"] / "tenants" / f"{newcomer}.yaml").write_text(tenant_yaml(newcomer, source=LEGACY, target="target"))
    configs = {LEGACY: legacy.admin_config(), "target": stack.kafka["target"].admin_config()}
    before = {alias: live_state(config) for alias, config in configs.items()}
    # the pinned MM2 as if its clients spoke ListGroups from v99 only, which no real broker answers
    monkeypatch.setattr(version, "APIS", tuple(
        dataclasses.replace(api, oldest=99, since="(unknown: raised by this test)") if api.name == "ListGroups"
        else api for api in version.APIS))
    try:
        refused = run_in_process("apply", str(repo["repo"]), "--secrets-dir", str(repo["secrets"]))
    finally:
        (repo["repo"] / "tenants" / f"{newcomer}.yaml").unlink()
    assert refused.returncode == 3, refused.stderr
    error = [line for line in refused.stderr.splitlines() if line.startswith("error: ")]
    assert error and error[0].startswith(f"error: cluster {LEGACY} (source, metadata.version 3.9-IV0")
    assert "ListGroups, MM2 needs v99+" in error[0] and "minimum broker version" in error[0]
    assert "cluster target" not in refused.stderr.split("error: ", 1)[1]
    assert {alias: live_state(config) for alias, config in configs.items()} == before
