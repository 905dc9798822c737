"""The manifests under k8s/ as a cluster gets them: `kustomize build` of k8s/admission (through the
caBundle overlay docs/admission.md describes) and k8s/audit, and the per-tenant objects `mm2gov
generate` renders from k8s/tenant, each object sent to the real kube-apiserver as a server-side dry-run
create with strict field validation (a misspelt field is an error, not silently dropped). A broken copy
of each kind is refused, so these tests can fail.
"""

from __future__ import annotations

import base64
import copy
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException

from devstack.tools import kustomize
from tests.conftest import REPO_ROOT, run_cli

Doc = dict[str, Any]


def _build(directory: Path) -> list[Doc]:
    built = subprocess.run([str(kustomize()), "build", str(directory)], capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    return [doc for doc in yaml.safe_load_all(built.stdout) if doc]


def _dry_run_create(api: dynamic.DynamicClient, doc: Doc) -> None:
    """POST the object with dryRun=All and fieldValidation=Strict (the dynamic client has no parameter
    for the latter, so both go into the path); raises ApiException when the API server refuses it."""
    resource = api.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
    path = resource.path(namespace=doc["metadata"]["namespace"]) if resource.namespaced else resource.path()
    api.request("post", f"{path}?dryRun=All&fieldValidation=Strict", body=doc)


def _accepted(api: dynamic.DynamicClient, docs: list[Doc]) -> None:
    """The namespaces the objects need are created for real (unless they exist), then every object is
    dry-run; a Namespace document under another name, its own name being taken."""
    core = client.CoreV1Api(api.client)
    declared = {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == "Namespace"}
    needed = {doc["metadata"]["namespace"] for doc in docs if doc["metadata"].get("namespace")}
    for name in sorted(needed | set(declared)):
        _create_namespace(core, declared.get(name, {"metadata": {"name": name}}))
    for doc in docs:
        if doc["kind"] == "Namespace":
            doc = {**doc, "metadata": {**doc["metadata"], "name": f"{doc['metadata']['name']}-dry-run"}}
        try:
            _dry_run_create(api, doc)
        except ApiException as exc:
            pytest.fail(f"{doc['kind']}/{doc['metadata']['name']} refused: {exc.status} {exc.body}")
        resource = api.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
        with pytest.raises(ApiException) as absent:  # a dry run: nothing was stored
            resource.get(name=doc["metadata"]["name"], namespace=doc["metadata"].get("namespace"))
        assert absent.value.status == 404


def _create_namespace(core: client.CoreV1Api, body: Doc) -> None:
    try:
        core.create_namespace(body)
    except ApiException as exc:
        assert exc.status == 409, exc.body  # it exists already


def _refused(api: dynamic.DynamicClient, docs: list[Doc], kind: str, breaks: list[Callable[[Doc], None]]) -> None:
    for index, damage in enumerate(breaks):
        broken = copy.deepcopy(next(doc for doc in docs if doc["kind"] == kind))
        broken["metadata"]["name"] += "-broken"
        damage(broken)
        with pytest.raises(ApiException) as refused:
            _dry_run_create(api, broken)
        assert refused.value.status in (400, 422), (kind, index, refused.value.body)


def _unknown_field(path: list[str]) -> Callable[[Doc], None]:
    def damage(doc: Doc) -> None:
        target = doc
        for key in path:
            target = target[key]
        target["replicaz" if "replicas" in target else "unknownField"] = 1
    return damage


@pytest.fixture(scope="module")
def api(stack) -> dynamic.DynamicClient:
    return dynamic.DynamicClient(stack.kube.client())


def test_k8s_admission_with_its_ca_bundle_is_accepted(api, stack, tmp_path):
    """The overlay of docs/admission.md ("The webhook's CA bundle without cert-manager") fills every
    webhook's caBundle from ca.crt; the result is accepted, the CA bundle is exactly the CA."""
    overlay = tmp_path / "admission"
    overlay.mkdir()
    (overlay / "ca.crt").write_bytes(stack.ca_pem_path.read_bytes())
    base = os.path.relpath(REPO_ROOT / "k8s" / "admission", overlay)
    (overlay / "kustomization.yaml").write_text(_documented_overlay().replace("../k8s/admission", base))
    docs = _build(overlay)
    assert {doc["kind"] for doc in docs} == {
        "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment", "Service",
        "PodDisruptionBudget", "ValidatingWebhookConfiguration"}  # the CA Secret is local-config: not applied
    [config] = [doc for doc in docs if doc["kind"] == "ValidatingWebhookConfiguration"]
    assert len(config["webhooks"]) == 2
    for hook in config["webhooks"]:
        assert base64.b64decode(hook["clientConfig"]["caBundle"]) == stack.ca_pem_path.read_bytes()
    _accepted(api, docs)
    _refused(api, docs, "ValidatingWebhookConfiguration", [
        lambda d: d["webhooks"][0].update(sideEffects="Some"),  # v1 takes None or NoneOnDryRun only
        lambda d: d["webhooks"][0]["clientConfig"].update(caBundle="not base64!"),
        lambda d: d["webhooks"][0]["clientConfig"].update(unknownField=1),
    ])
    _refused(api, docs, "Deployment", [_unknown_field(["spec"]), lambda d: d["spec"].update(replicas=-1)])


def test_k8s_admission_base_builds_without_a_ca_bundle():
    """The base alone (for cert-manager's CA injector) has the injector's annotation and no caBundle."""
    [config] = [doc for doc in _build(REPO_ROOT / "k8s" / "admission")
                if doc["kind"] == "ValidatingWebhookConfiguration"]
    assert config["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == "mm2gov-system/mm2gov-admission"
    assert all("caBundle" not in hook["clientConfig"] for hook in config["webhooks"])


def test_k8s_audit_is_accepted(api):
    docs = _build(REPO_ROOT / "k8s" / "audit")
    assert {doc["kind"] for doc in docs} == {"PersistentVolumeClaim", "CronJob"}
    assert {doc["metadata"]["namespace"] for doc in docs} == {"mm2gov-system"}
    _accepted(api, docs)
    _refused(api, docs, "CronJob", [
        lambda d: d["spec"].update(schedule="every six hours"),
        lambda d: d["spec"].update(concurrencyPolicy="Sometimes"),
        _unknown_field(["spec", "jobTemplate", "spec", "template", "spec"]),
    ])
    _refused(api, docs, "PersistentVolumeClaim", [lambda d: d["spec"].update(accessModes=["ReadWriteSometimes"])])


def test_generated_tenant_manifests_are_accepted(api, tmp_path):
    """k8s/tenant/rbac.yaml is a template (no kustomization): what `mm2gov generate` renders from it."""
    out = tmp_path / "out"
    generated = run_cli("generate", str(REPO_ROOT / "examples" / "acme"), "--out", str(out))
    assert generated.returncode == 0, generated.stderr
    files = sorted((out / "k8s" / "tenants").glob("*.yaml"))
    assert files
    docs = [doc for path in files for doc in yaml.safe_load_all(path.read_text()) if doc]
    assert {doc["kind"] for doc in docs} == {"Namespace", "ServiceAccount", "Role", "RoleBinding"}
    assert len(docs) == 4 * len(files)
    assert any(doc["rules"] for doc in docs if doc["kind"] == "Role")
    _accepted(api, docs)
    _refused(api, docs, "Role", [lambda d: d["rules"].append({"apiGroups": [""], "resources": ["secrets"]})])
    _refused(api, docs, "RoleBinding", [lambda d: d["roleRef"].update(kind="Group")])
    _refused(api, docs, "Namespace", [lambda d: d["metadata"]["labels"].update({"mm2gov.io/tenant": "-bad-"})])


def _documented_overlay() -> str:
    """The kustomization.yaml in docs/admission.md, as a user copies it."""
    text = (REPO_ROOT / "docs" / "admission.md").read_text()
    section = text[text.index("### The webhook's CA bundle without cert-manager"):]
    start = section.index("```yaml\n") + len("```yaml\n")
    return section[start:section.index("```", start)]
