"""The Strimzi objects `mm2gov generate` writes are valid against Strimzi's own CRDs."""

from __future__ import annotations

import copy
import json
import uuid

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from devstack.repo import write_stack_repo
from governance.kafka.admin import admin_client, describe_acls, scram_users
from tests.conftest import run_cli
from tests.tools.capacity import CAPACITY_YAML, FLOW, PAYMENTS_CAPACITY, acme_with
from tests.tools.failures import closed_port

PLURALS = {"KafkaMirrorMaker2": "kafkamirrormaker2s", "KafkaUser": "kafkausers", "KafkaTopic": "kafkatopics"}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> list[dict]:
    """acme's objects, payments' flow onprem -> cloud with capacity (replicas, tasksMax, resources, jvmOptions,
    its KafkaUser's quotas: every field a sized flow adds is checked against Strimzi's CRDs too)."""
    out = tmp_path_factory.mktemp("acme-out")
    repo = acme_with(tmp_path_factory.mktemp("acme-sized"), CAPACITY_YAML, PAYMENTS_CAPACITY)
    done = run_cli("generate", str(repo), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return [yaml.safe_load(p.read_text()) for p in sorted((out / "strimzi").glob("*.yaml"))]


def _create(api: client.CustomObjectsApi, obj: dict, namespace: str) -> dict:
    return api.create_namespaced_custom_object("kafka.strimzi.io", "v1", namespace, PLURALS[obj["kind"]], obj)


def test_generated_objects_are_accepted(stack, generated):
    core, api = client.CoreV1Api(stack.kube.client()), client.CustomObjectsApi(stack.kube.client())
    suffix = uuid.uuid4().hex[:5]
    kinds = set()
    for namespace in sorted({o["metadata"]["namespace"] for o in generated}):
        core.create_namespace({"metadata": {"name": f"{namespace}-{suffix}"}})
    for obj in generated:
        namespace = f"{obj['metadata']['namespace']}-{suffix}"
        body = dict(obj, metadata={**obj["metadata"], "namespace": namespace})
        created = _create(api, body, namespace)
        assert created["metadata"]["uid"]
        kinds.add(obj["kind"])
    assert kinds == {"KafkaMirrorMaker2", "KafkaUser", "KafkaTopic"}
    topics = {o["spec"]["topicName"] for o in generated if o["kind"] == "KafkaTopic"}
    assert topics == {"onprem.payments.refunds", "onprem.marketing.campaigns", "logistics.shipments"}
    mirror = next(o for o in generated if o["metadata"]["name"] == "payments-onprem-to-cloud")
    assert mirror["spec"]["mirrors"][0]["topicsPattern"] == r"payments\.orders.*,payments\.refunds,payments\.public\..*"
    assert mirror["spec"]["mirrors"][0]["sourceConnector"]["config"]["sync.topic.acls.enabled"] == "false"
    assert (mirror["spec"]["replicas"], mirror["spec"]["mirrors"][0]["sourceConnector"]["tasksMax"]) == (2, 3)
    assert mirror["spec"]["resources"]["requests"] == {"cpu": "1", "memory": "2Gi"}
    user = next(o for o in generated if o["metadata"]["name"] == f"mm2-{FLOW}")
    assert user["spec"]["quotas"] == {"producerByteRate": 8333334}


def test_a_quota_strimzi_refuses_is_rejected(stack, generated):
    """The apiserver holds spec.quotas to Strimzi's schema: the field mm2gov writes is the one Strimzi reads."""
    core, api = client.CoreV1Api(stack.kube.client()), client.CustomObjectsApi(stack.kube.client())
    namespace = f"quota-{uuid.uuid4().hex[:5]}"
    core.create_namespace({"metadata": {"name": namespace}})
    user = copy.deepcopy(next(o for o in generated if o["metadata"]["name"] == f"mm2-{FLOW}"))
    user["metadata"]["namespace"] = namespace
    user["spec"]["quotas"] = {"producerByteRate": "fast"}
    with pytest.raises(ApiException) as refused:
        _create(api, user, namespace)
    assert refused.value.status == 422 and "producerByteRate" in refused.value.body


def test_a_broken_object_is_rejected(stack, generated):
    core, api = client.CoreV1Api(stack.kube.client()), client.CustomObjectsApi(stack.kube.client())
    namespace = f"broken-{uuid.uuid4().hex[:5]}"
    core.create_namespace({"metadata": {"name": namespace}})
    user = copy.deepcopy(next(o for o in generated if o["kind"] == "KafkaUser"))
    user["metadata"]["namespace"] = namespace
    user["spec"]["authorization"]["acls"][0]["operations"] = ["Fly"]
    with pytest.raises(ApiException) as refused:
        _create(api, user, namespace)
    assert refused.value.status == 422 and "Fly" in refused.value.body


def test_apply_with_kubeconfig_reconciles_owned_strimzi_objects(stack, tmp_path):
    """apply creates, leaves unchanged, and deletes (when a tenant goes) only mm2gov's objects.

    Its Kafka part takes over the session stack's ownership records, after test_generate_apply
    (modules run in file order) is done with them.
    """
    suffix = uuid.uuid4().hex[:5]
    namespaces = {"source": f"kafka-src-{suffix}", "target": f"kafka-tgt-{suffix}"}
    core, api = client.CoreV1Api(stack.kube.client()), client.CustomObjectsApi(stack.kube.client())
    for namespace in namespaces.values():
        core.create_namespace({"metadata": {"name": namespace}})
    neighbour = {"apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaUser",
                 "metadata": {"name": "neighbour", "namespace": namespaces["target"]},
                 "spec": {"authentication": {"type": "scram-sha-512"}}}
    _create(api, neighbour, namespaces["target"])
    repo, secrets = tmp_path / "repo", tmp_path / "secrets"
    write_stack_repo(stack, repo, ["kpay", "kmkt"], strimzi_namespaces=namespaces)
    stack.export_secret_store(secrets)
    kubeconfig = stack.write_kubeconfig(tmp_path / "kubeconfig")
    args = ["apply", str(repo), "--secrets-dir", str(secrets), "--kubeconfig", str(kubeconfig), "--format", "json"]

    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    created = json.loads(first.stdout)["kubernetes"]["created"]
    assert f"KafkaMirrorMaker2 {namespaces['target']}/kpay-source-to-target" in created
    assert f"KafkaUser {namespaces['source']}/mm2-kpay-source-to-target" in created

    second = json.loads(run_cli(*args).stdout)["kubernetes"]
    assert second == {"created": [], "updated": [], "deleted": []}

    (repo / "tenants" / "kmkt.yaml").unlink()
    third = json.loads(run_cli(*args).stdout)["kubernetes"]
    assert f"KafkaMirrorMaker2 {namespaces['target']}/kmkt-source-to-target" in third["deleted"]
    assert not third["created"]
    users = api.list_namespaced_custom_object("kafka.strimzi.io", "v1", namespaces["target"], "kafkausers")
    names = {u["metadata"]["name"] for u in users["items"]}
    assert "neighbour" in names and "kmkt-app" not in names and "kpay-app" in names


@pytest.mark.parametrize("refusal", ["namespace_missing", "apiserver_unreachable"])
def test_apply_that_kubernetes_refuses_changes_nothing(stack, tmp_path, refusal):
    """A Strimzi object the apiserver refuses (here: its namespace does not exist, which the apiserver's
    NamespaceLifecycle admission says in the dry run as it would on the write), or an apiserver that cannot
    be reached, stops apply before anything changes: exit 3, the object or the apiserver named, no object
    created in the namespace that exists, no ACL or SCRAM user of the new tenant on either broker.

    The tenants' KafkaMirrorMaker2s and KafkaUsers go to the target's namespace (which exists), their
    KafkaUsers on the source to the source's (missing): objects are written in kind order, so without the
    dry run the KafkaMirrorMaker2s were created before the first KafkaUser was refused."""
    suffix = uuid.uuid4().hex[:5]
    tenant = f"kh{suffix}"
    namespaces = {"source": f"kafka-src-{suffix}", "target": f"kafka-tgt-{suffix}"}
    core, api = client.CoreV1Api(stack.kube.client()), client.CustomObjectsApi(stack.kube.client())
    core.create_namespace({"metadata": {"name": namespaces["target"]}})  # the source's is never created
    repo, secrets = tmp_path / "repo", tmp_path / "secrets"
    write_stack_repo(stack, repo, ["kpay", tenant], strimzi_namespaces=namespaces)
    stack.export_secret_store(secrets)
    kubeconfig = stack.write_kubeconfig(tmp_path / "kubeconfig")
    if refusal == "apiserver_unreachable":
        config = yaml.safe_load(kubeconfig.read_text())
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{closed_port()}"
        kubeconfig.write_text(yaml.safe_dump(config))

    done = run_cli("apply", str(repo), "--secrets-dir", str(secrets), "--kubeconfig", str(kubeconfig))

    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    if refusal == "namespace_missing":
        source = namespaces["source"]
        assert (f"error: Kubernetes refused to create kafkausers {source}/{tenant}-app: HTTP 404 Not Found: "
                f'namespaces "{source}" not found (a dry run, before any change: nothing was applied)') in done.stderr
    else:
        assert "error: Kubernetes API unreachable" in done.stderr
    for plural in PLURALS.values():
        assert not api.list_namespaced_custom_object("kafka.strimzi.io", "v1", namespaces["target"], plural)["items"]
    for alias in ("source", "target"):
        admin = admin_client(stack.kafka[alias].admin_config())
        assert not [b for b in describe_acls(admin) if tenant in b.principal], alias
        assert not [user for user in scram_users(admin) if tenant in user], alias


def test_an_object_written_between_plan_and_apply_is_replaced_not_refused(stack):
    """apply plans the Strimzi objects first and writes them after the brokers, which can take minutes; an
    operator writing an object in between (its status; here an annotation, which moves its resourceVersion
    the same way) must not turn the planned replace into a 409 conflict: the replace reads the object again."""
    from governance.k8s.strimzi_apply import OWNED_SELECTOR, plan_objects

    namespace = f"kafka-plan-{uuid.uuid4().hex[:5]}"
    core, api = client.CoreV1Api(stack.kube.client()), client.CustomObjectsApi(stack.kube.client())
    core.create_namespace({"metadata": {"name": namespace}})
    key, value = OWNED_SELECTOR.split("=")
    live = {"apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaUser",
            "metadata": {"name": "planned", "namespace": namespace, "labels": {key: value}},
            "spec": {"authentication": {"type": "scram-sha-512"}}}
    _create(api, live, namespace)
    desired = copy.deepcopy(live)
    desired["spec"]["authentication"]["type"] = "tls"

    plan = plan_objects(stack.kube.client(), [desired])
    assert plan.changes.updated == [f"KafkaUser {namespace}/planned"]
    api.patch_namespaced_custom_object("kafka.strimzi.io", "v1", namespace, "kafkausers", "planned",
                                       {"metadata": {"annotations": {"operator.example/seen": "yes"}}})
    plan.apply()

    now = api.get_namespaced_custom_object("kafka.strimzi.io", "v1", namespace, "kafkausers", "planned")
    assert now["spec"] == desired["spec"]
