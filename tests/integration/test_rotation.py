"""Rotation on the real stack: old password works until rotation, fails after; the MM2 restarted with
the new secret keeps replicating; the flow's KafkaMirrorMaker2 gets a rollout annotation; the other
tenant is untouched. Tenants rot-a and rot-b are this module's own."""

from __future__ import annotations

import contextlib
import json
import uuid

import pytest
import yaml
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from devstack.repo import write_stack_repo
from devstack.stack import CA_SECRET_NAME
from governance.kafka.admin import admin_client, create_topics, scram_users
from governance.kafka.records import Record, produce, read
from governance.model.names import flow_id
from governance.secrets.store import DirSecretStore
from tests.conftest import run_cli
from tests.tools.failures import closed_port, limited_admin

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

FLOW = flow_id("rot-a", "source", "target")  # "rot--a-source-to-target"


def authenticates(config: dict) -> bool:
    try:
        AdminClient({**config, "log_level": 0}).list_topics(timeout=10)
        return True
    except KafkaException:
        return False


@pytest.fixture(scope="module")
def rotation(stack, tmp_path_factory):
    root = tmp_path_factory.mktemp("rotation")
    repo, store, out = root / "repo", root / "store", root / "out"
    write_stack_repo(stack, repo, ["rot-a", "rot-b"], strimzi_namespaces={"target": "kafka-rot"})
    kubeconfig = stack.write_kubeconfig(root / "kubeconfig")
    from kubernetes import utils

    utils.create_from_yaml(stack.kube.client(), yaml_objects=[
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kafka-rot"}}])
    stack.export_secret_store(store)
    for args in (("secrets", "issue", str(repo), "--to", f"dir:{store}"),
                 ("apply", str(repo), "--secrets-dir", str(store), "--kubeconfig", str(kubeconfig)),
                 ("generate", str(repo), "--out", str(out), "--secrets-path", str(store))):
        done = run_cli(*args)
        assert done.returncode == 0, done.stderr
    source = stack.kafka["source"]
    create_topics(admin_client(source.admin_config()), ["rot-a.orders"])
    produce(source.admin_config(), "rot-a.orders", [Record(b"1", b"before rotation")])
    return {"repo": repo, "store": store, "out": out, "kubeconfig": kubeconfig}


def user_config(stack, store, cluster: str, user: str, password=None) -> dict:
    password = password or DirSecretStore(store).get(f"scram-{cluster}-{user}", "password")
    return stack.kafka[cluster].client_config(user, password)


@pytest.fixture(scope="module")
def rotated(stack, rotation):
    """rot-a's flow replicating, then `secrets rotate --tenant rot-a`: every test here reads the rotation's
    result from this fixture, so they pass in any order. The flow's MM2 keeps running for the test that
    restarts it (what the rollout does to a pod) and stops at the end of the module."""
    store = DirSecretStore(rotation["store"])
    old = {"rot-a": store.get("scram-source-rot-a-app", "password"),
           "rot-b": store.get("scram-source-rot-b-app", "password")}
    authenticated_before = authenticates(user_config(stack, rotation["store"], "source", "rot-a-app", old["rot-a"]))
    properties = rotation["out"] / "mm2" / f"{FLOW}.properties"
    stack.start_mirrormaker(FLOW, properties)
    try:
        target_reader = user_config(stack, rotation["store"], "target", "rot-a-app")
        first = read(target_reader, "source.rot-a.orders", 1, timeout=120, group="rot-a-check1")
        done = run_cli("--log-level", "debug", "secrets", "rotate", str(rotation["repo"]), "--to",
                       f"dir:{rotation['store']}", "--tenant", "rot-a", "--kubeconfig", str(rotation["kubeconfig"]),
                       "--format", "json")
        yield {"old": old, "authenticated_before": authenticated_before, "first": first, "done": done,
               "properties": properties}
    finally:
        if FLOW in stack.mirrormakers:
            stack.stop_mirrormaker(FLOW)


def test_rotation_replaces_credentials_and_mm2_keeps_replicating(stack, rotation, rotated):
    store = DirSecretStore(rotation["store"])
    old_a, old_b = rotated["old"]["rot-a"], rotated["old"]["rot-b"]
    assert rotated["authenticated_before"]
    first = rotated["first"]
    assert first.error is None and [r.value for r in first.records] == [b"before rotation"]

    done = rotated["done"]
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    rotated_secrets = {r["secret"]: r for r in result["rotated"]}
    assert set(rotated_secrets) == {"scram-source-rot-a-app", "scram-target-rot-a-app",
                                    f"scram-source-mm2-{FLOW}", f"scram-target-mm2-{FLOW}"}
    assert {r["generation"] for r in rotated_secrets.values()} == {2}
    assert result["restart_flows"] == [FLOW]
    assert result["rolled"] == [f"KafkaMirrorMaker2 kafka-rot/{FLOW}"]
    assert old_a.reveal() not in done.stdout + done.stderr

    # the old password stopped working, the new one works; the other tenant is untouched
    assert not authenticates(user_config(stack, rotation["store"], "source", "rot-a-app", old_a))
    assert authenticates(user_config(stack, rotation["store"], "source", "rot-a-app"))
    assert store.get("scram-source-rot-b-app", "password") == old_b
    assert authenticates(user_config(stack, rotation["store"], "source", "rot-b-app", old_b))
    assert store.annotations("scram-source-rot-a-app")["mm2gov.io/generation"] == "2"
    assert store.get("scram-source-rot-a-app", "sasl.jaas.config").reveal().endswith(
        f'password="{store.get("scram-source-rot-a-app", "password").reveal()}";')

    stack.stop_mirrormaker(FLOW)  # what the rollout does to a pod: restart with the new secret
    stack.start_mirrormaker(FLOW, rotated["properties"])
    produce(stack.kafka["source"].admin_config(), "rot-a.orders", [Record(b"2", b"after rotation")])
    target_reader = user_config(stack, rotation["store"], "target", "rot-a-app")
    after = read(target_reader, "source.rot-a.orders", 2, timeout=120, group="rot-a-check2")
    assert after.error is None
    assert [r.value for r in after.records] == [b"before rotation", b"after rotation"]


def test_rollout_annotation_is_on_the_kafkamirrormaker2(stack, rotated):
    from kubernetes import client

    assert rotated["done"].returncode == 0, rotated["done"].stderr
    mm2 = client.CustomObjectsApi(stack.kube.client()).get_namespaced_custom_object(
        "kafka.strimzi.io", "v1", "kafka-rot", "kafkamirrormaker2s", FLOW)
    annotations = mm2["spec"]["template"]["pod"]["metadata"]["annotations"]
    assert annotations["mm2gov.io/credentials-generation"].startswith("20")


def test_rotating_an_unknown_tenant_is_exit_2_and_changes_nothing(rotation):
    """Bad usage (exit 2, as `failover` and `probe` answer an unknown tenant), not a runtime failure."""
    before = sorted((p.name, p.read_bytes()) for p in rotation["store"].rglob("password"))
    done = run_cli("secrets", "rotate", str(rotation["repo"]), "--to", f"dir:{rotation['store']}",
                   "--tenant", "nobody")
    assert done.returncode == 2 and "error: no tenant 'nobody' in the repo (its tenants: rot-a, rot-b)" in done.stderr
    assert sorted((p.name, p.read_bytes()) for p in rotation["store"].rglob("password")) == before


@pytest.mark.parametrize("fault", ["cluster_unreachable", "clients_ca_missing", "apiserver_unreachable",
                                   "admin_may_not_alter"])
def test_a_rotation_that_cannot_finish_changes_nothing(stack, tmp_path, fault):
    """Each of these faults used to surface after the first cluster (source, in name order) was rotated: its
    passwords changed in the store and on its brokers, the rest not, nothing rolled. Every one is now checked
    before the first change: exit 3, the fault named, no secret written, no SCRAM user of the tenant on the
    source's brokers. The tenant is this test's own (its principals never existed: no apply needed); the
    admin the brokers do not allow to ALTER target is this test's own too (removed afterwards)."""
    tenant = f"rot-{uuid.uuid4().hex[:5]}"
    repo, store, admin_store = tmp_path / "repo", tmp_path / "store", tmp_path / "admin"
    write_stack_repo(stack, repo, [tenant], client_ca=fault == "clients_ca_missing",
                     strimzi_namespaces={"target": "kafka-rot"} if fault == "apiserver_unreachable" else None)
    stack.export_secret_store(admin_store)  # the admins' credentials; the rotated secrets go to `store`
    limited = contextlib.ExitStack()
    if fault == "admin_may_not_alter":
        repo, admin_store = limited.enter_context(limited_admin(stack, "target", f"limited-{tenant}", "ALTER",
                                                                repo, admin_store, tmp_path))
    args = ["secrets", "rotate", str(repo), "--to", f"dir:{store}", "--admin-secrets-dir", str(admin_store),
            "--tenant", tenant]
    port = closed_port()
    if fault == "cluster_unreachable":
        document = yaml.safe_load((repo / "clusters.yaml").read_text())
        document["clusters"]["target"]["bootstrap_servers"] = f"127.0.0.1:{port}"
        (repo / "clusters.yaml").write_text(yaml.safe_dump(document))
    if fault == "apiserver_unreachable":
        kubeconfig = stack.write_kubeconfig(tmp_path / "kubeconfig")
        config = yaml.safe_load(kubeconfig.read_text())
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{port}"
        kubeconfig.write_text(yaml.safe_dump(config))
        args += ["--kubeconfig", str(kubeconfig)]

    with limited:
        done = run_cli(*args)

    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert {"cluster_unreachable": f"error: cluster target (127.0.0.1:{port}) unreachable",
            "clients_ca_missing": f"error: cluster source: clients CA {CA_SECRET_NAME!r} is missing",
            "apiserver_unreachable": "error: Kubernetes API unreachable",
            "admin_may_not_alter": "error: cluster target: its admin principal may not ALTER the cluster"}[fault] \
        in done.stderr
    assert not [path for path in store.rglob("*") if path.is_file()]
    assert not [user for user in scram_users(admin_client(stack.kafka["source"].admin_config())) if tenant in user]

