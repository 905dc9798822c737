"""Apply mm2gov's Strimzi objects through the kubernetes client; owned objects only.

Owned = labelled `app.kubernetes.io/managed-by: mm2gov`. Desired objects are
created or replaced when they differ; owned objects no longer desired are
deleted; anything else in the namespace is never touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from governance.errors import RuntimeFailure

GROUP, VERSION = "kafka.strimzi.io", "v1"
PLURALS = {"KafkaMirrorMaker2": "kafkamirrormaker2s", "KafkaUser": "kafkausers", "KafkaTopic": "kafkatopics"}
OWNED_SELECTOR = "app.kubernetes.io/managed-by=mm2gov"


@dataclass
class KubeChanges:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.created) + len(self.updated) + len(self.deleted)

    def to_record(self) -> dict[str, list[str]]:
        return {"created": self.created, "updated": self.updated, "deleted": self.deleted}


def api_client(kubeconfig: Path):  # -> kubernetes.client.ApiClient
    from kubernetes import config

    try:
        return config.new_client_from_config(config_file=str(kubeconfig))
    except Exception as exc:  # noqa: BLE001 - a broken kubeconfig is one message
        raise RuntimeFailure(f"cannot use kubeconfig {kubeconfig}: {type(exc).__name__}: {exc}") from None


def _name(obj: dict[str, Any]) -> str:
    return f"{obj['kind']} {obj['metadata']['namespace']}/{obj['metadata']['name']}"


def _differs(live: dict[str, Any], desired: dict[str, Any]) -> bool:
    labels = live.get("metadata", {}).get("labels", {}) or {}
    return live.get("spec") != desired["spec"] or any(labels.get(k) != v
                                                       for k, v in desired["metadata"]["labels"].items())


ROLLOUT_ANNOTATION = "mm2gov.io/credentials-generation"


def _keep_rollout(live: dict[str, Any], desired: dict[str, Any]) -> dict[str, Any]:
    """Carry over the pod annotation `secrets rotate` sets: dropping it would restart MM2 for nothing."""
    pod = ((live.get("spec") or {}).get("template") or {}).get("pod") or {}
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(ROLLOUT_ANNOTATION)
    if value is None or desired["kind"] != "KafkaMirrorMaker2":
        return desired
    template = {"pod": {"metadata": {"annotations": {ROLLOUT_ANNOTATION: value}}}}
    return {**desired, "spec": {**desired["spec"], "template": template}}


def apply_objects(client, objects: list[dict[str, Any]], dry_run: bool = False) -> KubeChanges:
    from kubernetes import client as k8s
    from kubernetes.client.exceptions import ApiException

    api = k8s.CustomObjectsApi(client)
    changes = KubeChanges()
    desired = {(o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects}
    namespaces = sorted({key[1] for key in desired})
    try:
        for key, obj in sorted(desired.items()):
            kind, namespace, name = key
            try:
                live = api.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURALS[kind], name)
            except ApiException as exc:
                if exc.status != 404:
                    raise
                changes.created.append(_name(obj))
                if not dry_run:
                    api.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURALS[kind], obj)
                continue
            obj = _keep_rollout(live, obj)
            if _differs(live, obj):
                changes.updated.append(_name(obj))
                if not dry_run:
                    body = {**obj, "metadata": {**obj["metadata"],
                                                "resourceVersion": live["metadata"]["resourceVersion"]}}
                    api.replace_namespaced_custom_object(GROUP, VERSION, namespace, PLURALS[kind], name, body)
        for namespace in namespaces:
            for kind, plural in PLURALS.items():
                owned = api.list_namespaced_custom_object(GROUP, VERSION, namespace, plural,
                                                          label_selector=OWNED_SELECTOR)["items"]
                for item in owned:
                    if (kind, namespace, item["metadata"]["name"]) not in desired:
                        changes.deleted.append(f"{kind} {namespace}/{item['metadata']['name']}")
                        if not dry_run:
                            api.delete_namespaced_custom_object(GROUP, VERSION, namespace, plural,
                                                                item["metadata"]["name"])
    except ApiException as exc:
        raise RuntimeFailure(f"Kubernetes refused a Strimzi object: HTTP {exc.status} {exc.reason}: "
                             f"{_message(exc)}") from None
    except Exception as exc:
        if isinstance(exc, RuntimeFailure):
            raise
        raise RuntimeFailure(f"Kubernetes API unreachable: {type(exc).__name__}") from None
    return changes


def _message(exc) -> str:
    import json

    try:
        return json.loads(exc.body).get("message", "")[:500]
    except (TypeError, ValueError):
        return ""
