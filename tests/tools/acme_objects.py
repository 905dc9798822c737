"""The objects mm2gov puts into Kubernetes for examples/acme, as the admission webhook sees them.

`allowed_objects()` is every object that must be admitted: the Strimzi objects `mm2gov generate
examples/acme` writes (KafkaMirrorMaker2, KafkaUser, KafkaTopic) and the Secrets `mm2gov secrets
issue --to k8s` would write into governed namespaces (SCRAM credentials and cluster CA
certificates, in the tenants' namespaces and the Strimzi namespaces, where
governance/secrets/placement.py puts them; their values here are placeholders). The system
namespace (CA keys, admin credentials) is not governed by the webhook and is left out.

`namespaces()` is what the API server holds: each tenant's namespace labelled with its tenant,
the Strimzi namespaces unlabelled (shared by every tenant).

Used by tests/tools/gen_acme_admission_data.py (the Rego test data), the admission fuzz and
bench/admission.py.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
ACME = REPO_ROOT / "examples" / "acme"
TENANT_LABEL = "mm2gov.io/tenant"
GROUPS = {"KafkaMirrorMaker2": "kafka.strimzi.io", "KafkaUser": "kafka.strimzi.io", "KafkaTopic": "kafka.strimzi.io",
          "Secret": ""}


def load(repo: Path = ACME):
    from governance.config import load_inventory

    return load_inventory(repo)


def repo_document(repo: Path = ACME) -> dict[str, Any]:
    """The repo document the webhook pushes to OPA as data.mm2gov_repo (build_input, no locations)."""
    from governance.policy.input import build_input

    document = build_input(load(repo))
    document.pop("locations", None)
    return document


@lru_cache(maxsize=4)
def _state(repo: Path, opa_url: str | None):
    from governance.compile.desired import compile_desired
    from governance.policy.decide import decide

    inventory = load(repo)
    decision = decide(inventory, opa_url)
    blocking = decision.at_or_above("high")
    if blocking:
        raise RuntimeError(f"{repo} has high or critical violations: {blocking}")
    return inventory, compile_desired(inventory, decision), decision.tenancy


def strimzi_objects(repo: Path = ACME, opa_url: str | None = None) -> list[dict[str, Any]]:
    """What `mm2gov generate REPO` writes to OUT/strimzi/, in its order."""
    return copy.deepcopy(_state(repo, opa_url)[1].strimzi)


def tenant_index(repo: Path = ACME, opa_url: str | None = None):
    """Who owns what in REPO's decided tenancy, as the webhook's sync builds it (admission/ownership.py)."""
    from governance.admission.ownership import TenantIndex

    inventory, _, tenancy = _state(repo, opa_url)
    return TenantIndex.of(tenancy, inventory.clusters)


def secret_objects(repo: Path = ACME, opa_url: str | None = None) -> list[dict[str, Any]]:
    """The Secrets `mm2gov secrets issue --to k8s` writes into governed namespaces (placeholder values)."""
    from governance.model.names import SYSTEM_NAMESPACE
    from governance.secrets.issue import scram_doc
    from governance.secrets.placement import placement
    from governance.secrets.store import SecretDoc
    from governance.secrets.values import SecretValue

    inventory, state, _ = _state(repo, opa_url)
    placed = placement(state, inventory.clusters)
    docs: list[SecretDoc] = []
    for alias, principals in sorted(state.scram_users().items()):
        for principal in sorted(principals):
            docs.append(scram_doc(alias, principal, state.principal_tenants.get(principal),
                                  SecretValue("placeholder-not-a-password")))
    for alias, cluster in sorted(inventory.clusters.items()):
        if cluster.security.ca_secret:
            docs.append(SecretDoc(cluster.security.ca_secret, "ca", {"ca.crt": b"", "ca.p12": b"", "ca.password": b""},
                                  cluster=alias, annotations={"mm2gov.io/fingerprint": "sha256:00"}))
    objects = []
    for doc in docs:
        annotations = dict(doc.annotations)
        if "mm2gov.io/issued-at" in annotations:  # fixed, so the generated test data is reproducible
            annotations["mm2gov.io/issued-at"] = "2026-01-01T00:00:00+00:00"
        for namespace in placed.namespaces(doc.name):
            if namespace == SYSTEM_NAMESPACE:
                continue
            objects.append({"apiVersion": "v1", "kind": "Secret",
                            "metadata": {"name": doc.name, "namespace": namespace, "labels": doc.labels(),
                                         "annotations": annotations},
                            "type": "Opaque", "data": {key: "" for key in sorted(doc.data)}})
    return objects


def allowed_objects(repo: Path = ACME, opa_url: str | None = None) -> list[dict[str, Any]]:
    return strimzi_objects(repo, opa_url) + secret_objects(repo, opa_url)


def namespaces(repo: Path = ACME) -> dict[str, dict[str, str]]:
    """Namespace -> labels, as the API server holds them for the repo's objects."""
    inventory = load(repo)
    found: dict[str, dict[str, str]] = {}
    for cluster in inventory.clusters.values():
        if cluster.strimzi:
            found[cluster.strimzi.namespace] = {"mm2gov.io/governed": "true"}
    for name, tenant in inventory.tenants.items():
        found[tenant.namespace or name] = {"mm2gov.io/governed": "true", TENANT_LABEL: name}
    return found


def admission_request(obj: dict[str, Any], uid: str = "acme", operation: str = "CREATE") -> dict[str, Any]:
    """The `request` the API server sends for creating `obj`."""
    kind = obj["kind"]
    return {"uid": uid, "kind": {"group": GROUPS.get(kind, "kafka.strimzi.io"), "version": "v1", "kind": kind},
            "resource": {"group": GROUPS.get(kind, "kafka.strimzi.io"), "version": "v1",
                         "resource": kind.lower() + "s"},
            "operation": operation, "namespace": obj["metadata"]["namespace"], "name": obj["metadata"]["name"],
            "object": obj, "oldObject": None, "dryRun": False,
            "userInfo": {"username": "system:serviceaccount:mm2gov-system:mm2gov"}}


def admission_review(obj: dict[str, Any], uid: str = "acme", operation: str = "CREATE") -> dict[str, Any]:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": admission_request(obj, uid, operation)}


def policy_inputs(objects: list[dict[str, Any]], index: Any, labels: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """The admission input the webhook asks OPA with for each object (as created); `index`: tenant_index()."""
    from governance.admission.envelope import parse_review
    from governance.admission.facts import policy_input

    inputs = []
    for obj in objects:
        request = parse_review(json.dumps(admission_review(obj)).encode())
        inputs.append(policy_input(request, labels[request["namespace"]], index))
    return inputs
