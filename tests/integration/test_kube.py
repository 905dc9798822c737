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
