"""The real kube-apiserver of the stack stores Secrets and enforces Strimzi's CRD schemas."""

from __future__ import annotations

import base64
import copy
import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

EXAMPLE = Path(__file__).parent / "data" / "strimzi-kafka-mirror-maker-2.yaml"


@pytest.fixture(scope="module")
def namespace(stack) -> str:
    name = f"mm2gov-test-{uuid.uuid4().hex[:6]}"
    client.CoreV1Api(stack.kube.client()).create_namespace({"metadata": {"name": name}})
    return name


def test_secret_is_stored_and_returned(stack, namespace):
    core = client.CoreV1Api(stack.kube.client())
    value = uuid.uuid4().hex
    core.create_namespaced_secret(namespace, {
        "metadata": {"name": "tenant-creds", "labels": {"app.kubernetes.io/managed-by": "mm2gov"}},
        "type": "Opaque", "data": {"password": base64.b64encode(value.encode()).decode()},
    })
    secret = core.read_namespaced_secret("tenant-creds", namespace)
    assert base64.b64decode(secret.data["password"]).decode() == value
    assert secret.metadata.labels["app.kubernetes.io/managed-by"] == "mm2gov"


def _mm2_example() -> dict:
    return next(d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d and d["kind"] == "KafkaMirrorMaker2")


def test_strimzi_crds_are_served(stack):
    crds = client.ApiextensionsV1Api(stack.kube.client()).list_custom_resource_definition().items
    names = {crd.metadata.name for crd in crds}
    assert {"kafkamirrormaker2s.kafka.strimzi.io", "kafkausers.kafka.strimzi.io",
            "kafkatopics.kafka.strimzi.io", "kafkas.kafka.strimzi.io"} <= names


def test_valid_kafkamirrormaker2_is_accepted(stack, namespace):
    api = client.CustomObjectsApi(stack.kube.client())
    body = _mm2_example()
    created = api.create_namespaced_custom_object("kafka.strimzi.io", "v1", namespace, "kafkamirrormaker2s", body)
    assert created["metadata"]["name"] == body["metadata"]["name"]


@pytest.mark.parametrize("breakage", ["replicas-not-an-integer", "unknown-spec-field-type", "missing-target"])
def test_kafkamirrormaker2_violating_strimzi_schema_is_rejected(stack, namespace, breakage):
    api = client.CustomObjectsApi(stack.kube.client())
    body = copy.deepcopy(_mm2_example())
    body["metadata"]["name"] = f"broken-{breakage}"
    if breakage == "replicas-not-an-integer":
        body["spec"]["replicas"] = "three"
    elif breakage == "unknown-spec-field-type":
        body["spec"]["version"] = {"not": "a string"}
    else:
        del body["spec"]["target"]
    with pytest.raises(ApiException) as refused:
        api.create_namespaced_custom_object("kafka.strimzi.io", "v1", namespace, "kafkamirrormaker2s", body)
    assert refused.value.status == 422
    with pytest.raises(ApiException) as missing:
        api.get_namespaced_custom_object("kafka.strimzi.io", "v1", namespace, "kafkamirrormaker2s",
                                         body["metadata"]["name"])
    assert missing.value.status == 404


def test_the_derived_object_names_are_names_the_api_server_accepts(stack, namespace):
    """The real kube-apiserver is the oracle for names.py's Kubernetes names (issue 24, class 3): a KafkaTopic
    for topics Kafka allows but Kubernetes would not name as they are, a KafkaMirrorMaker2 for a flow id past
    Strimzi's limit and the Service Strimzi derives from it (a DNS label) are all accepted (server dry run), and a
    name names.py calls invalid is refused."""
    from governance.model import names

    api = client.CustomObjectsApi(stack.kube.client())
    core = client.CoreV1Api(stack.kube.client())
    topics = ["onprem.Payments.x", "a_b", "-lead.dot.", "x" * 249, "onprem.payments.x.h0123456789abcdef0123",
              "UPPER_CASE.Topic-1"]
    for topic in topics:
        name = names.kafka_topic_object(topic)
        body = {"apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaTopic", "metadata": {"name": name},
                "spec": {"topicName": topic}}
        assert api.create_namespaced_custom_object("kafka.strimzi.io", "v1", namespace, "kafkatopics", body,
                                                   dry_run="All")["metadata"]["name"] == name
    flow = names.flow_id("a" * 40, "onprem-datacenter-one", "cloud-region-two")
    mm2 = names.mirror_maker_object(flow)
    body = copy.deepcopy(_mm2_example())
    body["metadata"] = {"name": mm2, "labels": {"mm2gov.io/flow": mm2}}
    api.create_namespaced_custom_object("kafka.strimzi.io", "v1", namespace, "kafkamirrormaker2s", body, dry_run="All")
    core.create_namespaced_service(namespace, {"metadata": {"name": f"{mm2}-mirrormaker2-api"},
                                               "spec": {"ports": [{"port": 8083}]}}, dry_run="All")
    assert not names.is_k8s_name("a_b")
    with pytest.raises(ApiException) as refused:
        api.create_namespaced_custom_object("kafka.strimzi.io", "v1", namespace, "kafkatopics", {
            "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaTopic", "metadata": {"name": "a_b"},
            "spec": {"topicName": "a_b"}}, dry_run="All")
    assert refused.value.status == 422
