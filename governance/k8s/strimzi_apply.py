"""Apply mm2gov's Strimzi objects through the kubernetes client; owned objects only.

Owned = labelled `app.kubernetes.io/managed-by: mm2gov`. Desired objects are
created or replaced when they differ; owned objects no longer desired are
deleted; anything else in the namespace is never touched.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
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


def api_client(kubeconfig: Path) -> Any:  # kubernetes.client.ApiClient
    from kubernetes import config

    try:
        return config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
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


@dataclass(frozen=True)
class _Write:
    """One change to a custom object: create or replace (with the desired object) or delete."""

    verb: str  # "create", "replace" or "delete"
    namespace: str
    plural: str
    name: str
    body: dict[str, Any] | None = None

    def send(self, api: Any, dry_run: bool) -> None:
        """Make it, or (dry_run) have the apiserver check it without persisting it: dryRun=All runs every
        validation and admission step a real write does. A replace reads the live object again first and
        takes its resourceVersion then (an operator may have written its status since the plan: the write
        would be a conflict), and keeps its rollout annotation. A refusal names the object."""
        from kubernetes.client.exceptions import ApiException

        where = (GROUP, VERSION, self.namespace, self.plural)
        options = {"dry_run": "All"} if dry_run else {}
        try:
            if self.verb == "create":
                api.create_namespaced_custom_object(*where, self.body, **options)
            elif self.verb == "replace":
                assert self.body is not None
                live = _live(api, self.namespace, self.plural, self.name)
                if live is None:  # deleted since the plan: create it
                    api.create_namespaced_custom_object(*where, self.body, **options)
                    return
                obj = _keep_rollout(live, self.body)
                body = {**obj, "metadata": {**obj["metadata"], "resourceVersion": live["metadata"]["resourceVersion"]}}
                api.replace_namespaced_custom_object(*where, self.name, body, **options)
            else:
                api.delete_namespaced_custom_object(*where, self.name, **options)
        except ApiException as exc:
            when = " (a dry run, before any change: nothing was applied)" if dry_run else ""
            raise RuntimeFailure(f"Kubernetes refused to {self.verb} {self.plural} {self.namespace}/{self.name}: "
                                 f"HTTP {exc.status} {exc.reason}: {_message(exc)}{when}") from None


@dataclass
class KubePlan:
    """What `apply` changes on Kubernetes: read from the live objects and accepted by the apiserver in a
    server-side dry run (Strimzi's schemas, the namespaces, admission webhooks), by `plan_objects`."""

    api: Any  # kubernetes.client.CustomObjectsApi
    changes: KubeChanges
    writes: list[_Write]

    def apply(self) -> KubeChanges:
        """Make the planned changes, after the brokers'. The dry run accepted each of them, so what can still
        fail here is the apiserver going away or refusing what changed since: the message says the brokers
        were changed, and running apply again finishes."""
        try:
            with kubernetes_errors():
                for write in self.writes:
                    write.send(self.api, dry_run=False)
        except RuntimeFailure as exc:
            raise RuntimeFailure(f"{exc}; the brokers' changes were made already: run apply again to finish") from None
        return self.changes


def plan_objects(client: Any, objects: list[dict[str, Any]], check: bool = True) -> KubePlan:
    """Read the live objects and plan the creates, replaces and deletes that make the owned ones `objects`;
    with `check`, send each with dryRun=All: the apiserver validates every one before `apply` changes
    anything, on Kubernetes or on the brokers. A refusal is a RuntimeFailure naming the object; nothing was
    written. Without `check` (`apply --dry-run`) only reads are sent: a preview needs no write access."""
    from kubernetes import client as k8s

    api: Any = k8s.CustomObjectsApi(client)  # its methods answer plain dicts, typed `object`
    changes = KubeChanges()
    writes: list[_Write] = []
    desired = {(o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects}
    with kubernetes_errors():
        for (kind, namespace, name), obj in sorted(desired.items()):
            live = _live(api, namespace, PLURALS[kind], name)
            if live is None:
                changes.created.append(_name(obj))
                writes.append(_Write("create", namespace, PLURALS[kind], name, obj))
                continue
            if _differs(live, _keep_rollout(live, obj)):
                changes.updated.append(_name(obj))
                writes.append(_Write("replace", namespace, PLURALS[kind], name, obj))
        for namespace in sorted({key[1] for key in desired}):
            for kind, plural in PLURALS.items():
                owned = api.list_namespaced_custom_object(GROUP, VERSION, namespace, plural,
                                                          label_selector=OWNED_SELECTOR)["items"]
                for item in owned:
                    name = item["metadata"]["name"]
                    if (kind, namespace, name) not in desired:
                        changes.deleted.append(f"{kind} {namespace}/{name}")
                        writes.append(_Write("delete", namespace, plural, name))
        for write in writes if check else ():
            write.send(api, dry_run=True)
    return KubePlan(api, changes, writes)


def _live(api: Any, namespace: str, plural: str, name: str) -> dict[str, Any] | None:
    from kubernetes.client.exceptions import ApiException

    try:
        live: dict[str, Any] = api.get_namespaced_custom_object(GROUP, VERSION, namespace, plural, name)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return live


@contextlib.contextmanager
def kubernetes_errors() -> Iterator[None]:
    """Whatever the kubernetes client raises (a refusal, an apiserver that cannot be reached) is one message
    (exit 3), never a traceback."""
    from kubernetes.client.exceptions import ApiException

    try:
        yield
    except RuntimeFailure:
        raise
    except ApiException as exc:
        raise RuntimeFailure(f"Kubernetes refused a request: HTTP {exc.status} {exc.reason}: "
                             f"{_message(exc)}") from None
    except Exception as exc:  # noqa: BLE001 - connection errors of urllib3 and the like: one message
        raise RuntimeFailure(f"Kubernetes API unreachable: {type(exc).__name__}") from None


def _message(exc: Any) -> str:
    try:
        return str(json.loads(exc.body).get("message", ""))[:500]
    except (TypeError, ValueError):
        return ""
