"""The policy input of an admission review: the facts Rego cannot compute, and the tenant it is held to.

Python extracts what Rego cannot (it has no regex parser and must not split Kafka LIST values
itself): regex facts per pattern item, the items of every pattern field per mirror, the
bootstrap servers of every connection as Kafka's LIST, and every Secret the spec references,
wherever in the spec. A Secret's values never reach the policy, only its key names.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from governance.admission.ownership import TenantIndex, resolve_tenant
from governance.config.regex import RegexProblem, analyse, split_list
from governance.kafka.version import MIN_MM2_VERSION, mm2_version_ok

PATTERN_FIELDS = ("topicsPattern", "topicsExcludePattern", "groupsPattern", "groupsExcludePattern")
MAX_PATTERNS = 256  # distinct pattern items analysed per review
MAX_ITEMS = 256  # items of one pattern field sent to the policy; more is refused
TOO_MANY = "\u2026more items than mm2gov analyses"  # the item that stands for the rest (refused)
# Keys whose object value names a Secret in `name` (env valueFrom, envFrom, CSI, projected sources).
SECRET_REF_KEYS = ("secretKeyRef", "secretRef", "nodePublishSecretRef", "secret")
TRUSTED_CERTIFICATES = ("trustedCertificates", "tlsTrustedCertificates")

def _without_values(secret: dict[str, Any]) -> dict[str, Any]:
    """A Secret as the policy sees it: metadata, type and key names, never data."""
    keys = set()
    for name in ("data", "stringData"):
        if isinstance(secret.get(name), dict):
            keys |= {k for k in secret[name] if isinstance(k, str)}
    return {"apiVersion": secret.get("apiVersion"), "kind": "Secret", "metadata": secret.get("metadata"),
            "type": secret.get("type"), "keys": sorted(keys)}


@lru_cache(maxsize=4096)
def _facts(regex: str) -> dict[str, Any]:
    """One pattern's facts (or why it is refused); the same patterns come back on every review."""
    try:
        return analyse(regex).to_input()
    except RegexProblem as exc:
        return {"error": str(exc)}
    except (RecursionError, OverflowError, MemoryError):
        return {"error": "pattern too complex to analyse"}


def _mirrors(obj: dict[str, Any]) -> list[Any]:
    spec = obj.get("spec")
    mirrors = spec.get("mirrors") if isinstance(spec, dict) else None
    return mirrors if isinstance(mirrors, list) else []


def _patterns(obj: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """(items, facts): per mirror, the items of each pattern field as Kafka's LIST type splits it
    (None for a mirror that is not an object); and the facts of every distinct item."""
    per_mirror: list[Any] = []
    found: dict[str, Any] = {}
    for mirror in _mirrors(obj):
        if not isinstance(mirror, dict):
            per_mirror.append(None)
            continue
        fields: dict[str, list[str]] = {}
        for name in PATTERN_FIELDS:
            text = mirror.get(name)
            if not isinstance(text, str):
                continue
            items = split_list(text)  # exactly as Kafka's LIST type splits it: Rego never splits
            if len(items) > MAX_ITEMS:
                items = [*items[:MAX_ITEMS], TOO_MANY]
            fields[name] = items
            for regex in items:
                if regex in found:
                    continue
                if regex == TOO_MANY:
                    found[regex] = {"error": f"more than {MAX_ITEMS} items in one pattern"}
                elif regex == "":
                    found[regex] = {"error": "an empty item (a stray comma): Kafka 4's topics/groups lists refuse "
                                             "empty items"}
                elif len(found) >= MAX_PATTERNS:
                    found[regex] = {"error": f"more than {MAX_PATTERNS} patterns"}
                else:
                    found[regex] = _facts(regex) if len(regex) <= 1024 else {"error": "pattern over 1024 characters"}
        per_mirror.append(fields)
    return per_mirror, found


def pointer(segments: list[Any]) -> str:
    """A JSON pointer as the policy writes it (lib.pointer): '~' as '~0', '/' as '~1'."""
    return "/".join(str(s).replace("~", "~0").replace("/", "~1") for s in segments)


def _servers(value: Any) -> list[str]:
    """bootstrapServers as Kafka's LIST of host:port, lower-cased (host names are case-insensitive)."""
    return [item.lower() for item in split_list(value)] if isinstance(value, str) else []


def _bootstrap(obj: dict[str, Any]) -> dict[str, list[str]]:
    """The bootstrap servers of every connection of a KafkaMirrorMaker2, keyed by their pointer."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return {}
    found: dict[str, list[str]] = {}
    target = spec.get("target")
    if isinstance(target, dict):
        found["spec/target/bootstrapServers"] = _servers(target.get("bootstrapServers"))
    for i, mirror in enumerate(_mirrors(obj)):
        source = mirror.get("source") if isinstance(mirror, dict) else None
        if isinstance(source, dict):
            found[f"spec/mirrors/{i}/source/bootstrapServers"] = _servers(source.get("bootstrapServers"))
    clusters = spec.get("clusters")
    for k, cluster in enumerate(clusters if isinstance(clusters, list) else []):
        if isinstance(cluster, dict):
            found[f"spec/clusters/{k}/bootstrapServers"] = _servers(cluster.get("bootstrapServers"))
    return found


def _secret_refs(value: Any, path: list[Any], found: list[list[str]]) -> None:
    """Every Secret named anywhere under `value`: `secretName` (passwordSecret, certificateAndKey,
    trusted certificates, secret volumes, OAuth secrets), `{secretKeyRef|secretRef|
    nodePublishSecretRef|secret: {name}}` (env, envFrom, CSI, projected volumes), and trusted
    certificates chosen by `pattern`, which names no one Secret. Non-string names read as ""."""
    if isinstance(value, dict):
        for key, item in value.items():
            here = [*path, key]
            if key == "secretName":
                found.append([pointer(here), item if isinstance(item, str) else "", "secretName"])
            elif key in SECRET_REF_KEYS and isinstance(item, dict) and "name" in item:
                name = item["name"]
                found.append([pointer([*here, "name"]), name if isinstance(name, str) else "", key])
            elif key == "pattern" and len(path) >= 2 and path[-2] in TRUSTED_CERTIFICATES:
                found.append([pointer(here), item if isinstance(item, str) else "", "pattern"])
            if isinstance(item, (dict, list)):
                _secret_refs(item, here, found)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, (dict, list)):
                _secret_refs(item, [*path, i], found)


def secret_refs(obj: dict[str, Any]) -> list[list[str]]:
    """[pointer, secret name, how] of every Secret the object's spec references."""
    found: list[list[str]] = []
    spec = obj.get("spec")
    if isinstance(spec, dict):
        _secret_refs(spec, ["spec"], found)
    return found


def _metadata(obj: Any) -> dict[str, Any]:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def object_name(request: Mapping[str, Any], obj: Mapping[str, Any]) -> str:
    name = request.get("name") or _metadata(obj).get("name") or ""
    return name if isinstance(name, str) else ""


def policy_input(request: dict[str, Any], namespace_labels: Mapping[str, Any],
                 index: TenantIndex | None = None) -> dict[str, Any]:
    """The document `data.mm2gov.admission.decision` is asked with (docs/admission.md, "Input").

    `namespace_labels` are the labels of the request's namespace as the API server has them;
    `index` says who owns what in a Strimzi namespace (without it, only namespace labels count).
    """
    kind = request["kind"]["kind"]
    namespace = request.get("namespace") or ""
    obj = request.get("object") if isinstance(request.get("object"), dict) else request.get("oldObject")
    obj = obj if isinstance(obj, dict) else {}
    old = request.get("oldObject") if isinstance(request.get("oldObject"), dict) else None
    name = object_name(request, obj)
    tenant, how = resolve_tenant(kind, obj, name, namespace, namespace_labels, index)
    old_tenant = ""
    if request["operation"] == "UPDATE" and old is not None:
        old_tenant, _ = resolve_tenant(kind, old, object_name(request, old), namespace, namespace_labels, index)
    document: dict[str, Any] = {
        "operation": request["operation"],
        "kind": kind,
        "namespace": namespace,
        "name": name,
        "tenant": tenant,
        "tenant_from": how,
        "old_tenant": old_tenant,
        "object": _without_values(obj) if kind == "Secret" else obj,
        "patterns": {},
        "mirror_patterns": [],
        "bootstrap_servers": {},
        "secret_refs": [],
    }
    if kind == "KafkaMirrorMaker2":
        document["mirror_patterns"], document["patterns"] = _patterns(obj)
        document["bootstrap_servers"] = _bootstrap(obj)
        # spec.version: unset is the operator's default release (Strimzi runs only the ones it supports)
        version = obj.get("spec", {}).get("version") if isinstance(obj.get("spec"), dict) else None
        document["mm2_version_ok"] = None if version is None else mm2_version_ok(version)
        document["mm2_min_version"] = ".".join(map(str, MIN_MM2_VERSION))
    if kind in ("KafkaMirrorMaker2", "KafkaUser"):
        document["secret_refs"] = secret_refs(obj)
    return document

