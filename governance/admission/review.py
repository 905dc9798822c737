"""AdmissionReview in, policy input out, AdmissionReview back: the pure part of the webhook.

Nothing here trusts the request. A body that is not a well-formed `admission.k8s.io/v1`
AdmissionReview raises `BadReview` (the server answers HTTP 400, or a denial when a `uid`
could be read); every field the policy reads is type-checked first, so hostile input
becomes a denial, never an allow and never a crash.

The tenant an object is held to never comes from the object itself (its author writes
its labels): it is the `mm2gov.io/tenant` label of its namespace as the API server has
it, or, in a cluster's Strimzi namespace (shared by every tenant, written by the
platform), the tenant the governance repo says owns what the object is: the flow a
KafkaMirrorMaker2 is named after, the user a KafkaUser is, the prefixes a KafkaTopic's
name falls under, the credential a Secret holds (`TenantIndex`). The object's own label
is only compared with that tenant (a mismatch is refused by the policy).

Python extracts the facts Rego cannot compute (it has no regex parser and must not
split Kafka LIST values itself): regex facts per pattern item, the items of every
pattern field per mirror, the bootstrap servers of every connection as Kafka's LIST,
and every Secret the spec references, wherever in the spec.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from governance.config.regex import RegexProblem, analyse, split_list
from governance.kafka.version import MIN_MM2_VERSION, mm2_version_ok

API_VERSION = "admission.k8s.io/v1"
MAX_BODY_BYTES = 3 * 1024 * 1024  # the API server's own limit for a request body is about 3 MiB
MAX_NESTING = 64
TENANT_LABEL = "mm2gov.io/tenant"
GOVERNED_KINDS = ("KafkaMirrorMaker2", "KafkaUser", "KafkaTopic", "Secret")
PATTERN_FIELDS = ("topicsPattern", "topicsExcludePattern", "groupsPattern", "groupsExcludePattern")
MAX_PATTERNS = 256  # distinct pattern items analysed per review
MAX_ITEMS = 256  # items of one pattern field sent to the policy; more is refused
TOO_MANY = "\u2026more items than mm2gov analyses"  # the item that stands for the rest (refused)
# Keys whose object value names a Secret in `name` (env valueFrom, envFrom, CSI, projected sources).
SECRET_REF_KEYS = ("secretKeyRef", "secretRef", "nodePublishSecretRef", "secret")
TRUSTED_CERTIFICATES = ("trustedCertificates", "tlsTrustedCertificates")


class BadReview(ValueError):
    """Not a usable AdmissionReview; `uid` is set when one could be read (answer with a denial)."""

    def __init__(self, message: str, uid: str | None = None) -> None:
        super().__init__(message)
        self.uid = uid


class _DuplicateKey(ValueError):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all distinct: a duplicate key means two readers may see two
    different objects (Python keeps the last value, other parsers the first), so it is refused."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


def _depth_ok(value: Any, limit: int = MAX_NESTING) -> bool:
    """No value deeper than `limit` (the top level is 1). Level by level, without a tuple per value:
    this runs on every review."""
    level = [value]
    for _ in range(limit):
        below: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                below.extend(item.values())
            elif isinstance(item, list):
                below.extend(item)
        if not below:
            return True
        level = below
    return False


def _uid_of(body: bytes) -> str | None:
    """The uid of a body that parses as JSON (duplicate keys allowed), for a denial that names it."""
    try:
        review = json.loads(body)
    except (ValueError, RecursionError):
        return None
    request = review.get("request") if isinstance(review, dict) else None
    uid = request.get("uid") if isinstance(request, dict) else None
    return uid if isinstance(uid, str) and 0 < len(uid) <= 128 else None


def _metadata(obj: Any) -> dict[str, Any]:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def parse_review(body: bytes) -> dict[str, Any]:
    """The `request` of an AdmissionReview, checked for the fields the webhook relies on."""
    if len(body) > MAX_BODY_BYTES:
        raise BadReview(f"request body over {MAX_BODY_BYTES} bytes")
    try:
        review = json.loads(body, object_pairs_hook=_unique_pairs)
    except _DuplicateKey:
        raise BadReview("the body has an object with a duplicate key", _uid_of(body)) from None
    except (ValueError, RecursionError):
        raise BadReview("body is not JSON") from None
    if not isinstance(review, dict) or not _depth_ok(review):
        raise BadReview("body is not a JSON object, or nested too deeply")
    request = review.get("request")
    uid = request.get("uid") if isinstance(request, dict) else None
    uid = uid if isinstance(uid, str) and 0 < len(uid) <= 128 else None
    if review.get("apiVersion") != API_VERSION or review.get("kind") != "AdmissionReview":
        raise BadReview(f"expected apiVersion {API_VERSION}, kind AdmissionReview", uid)
    if not isinstance(request, dict) or uid is None:
        raise BadReview("request.uid is missing or not a string", None)
    kind = request.get("kind")
    if not isinstance(kind, dict) or not isinstance(kind.get("kind"), str):
        raise BadReview("request.kind.kind is missing", uid)
    if kind["kind"] not in GOVERNED_KINDS:  # the webhook is registered for these only: anything else is a mistake
        raise BadReview(f"kind {kind['kind'][:64]!r} is not one mm2gov governs ({', '.join(GOVERNED_KINDS)})", uid)
    if request.get("operation") not in ("CREATE", "UPDATE", "DELETE", "CONNECT"):
        raise BadReview("request.operation is not CREATE, UPDATE, DELETE or CONNECT", uid)
    for name in ("namespace", "name"):
        if not isinstance(request.get(name, ""), str):
            raise BadReview(f"request.{name} is not a string", uid)
    for name in ("object", "oldObject"):
        if request.get(name) is not None and not isinstance(request[name], dict):
            raise BadReview(f"request.{name} is not an object", uid)
    if request["operation"] in ("CREATE", "UPDATE") and not isinstance(request.get("object"), dict):
        raise BadReview("request.object is missing", uid)
    for name in ("object", "oldObject"):
        obj = request.get(name)
        if not isinstance(obj, dict):
            continue
        if obj.get("kind") != kind["kind"]:
            raise BadReview(f"request.{name}.kind does not match request.kind ({kind['kind']})", uid)
        metadata = obj.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            raise BadReview(f"request.{name}.metadata is not an object", uid)
        metadata = metadata or {}
        # The request's namespace and name are the API server's; an object that says otherwise
        # would be judged as one thing and stored as another.
        for key in ("namespace", "name"):
            said, told = metadata.get(key), request.get(key) or ""
            if said not in (None, "") and (not isinstance(said, str) or (told and said != told)):
                raise BadReview(f"request.{name}.metadata.{key} does not match request.{key}", uid)
    return request


# ---- the tenant -------------------------------------------------------------------------------

def _add(index: dict[str, str], key: Any, tenant: str) -> None:
    """Record who owns `key`; a key two tenants claim belongs to neither (the repo rules refuse it)."""
    if isinstance(key, str) and key:
        index[key] = tenant if index.get(key, tenant) == tenant else ""


@dataclass(frozen=True)
class TenantIndex:
    """Who owns what, read from the repo document as the webhook pushes it to OPA (names are the
    ones governance/model/names.py derived and the document carries; none is derived here)."""

    shared_namespaces: frozenset[str] = frozenset()  # the Strimzi namespaces of clusters.yaml
    flows: Mapping[str, str] = field(default_factory=dict)  # flow id -> tenant
    users: Mapping[str, str] = field(default_factory=dict)  # Kafka user name -> tenant
    secrets: Mapping[str, str] = field(default_factory=dict)  # credential Secret name -> tenant
    topic_prefixes: tuple[tuple[str, str], ...] = ()  # (prefix, tenant), longest first

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> TenantIndex:
        clusters = document.get("clusters") or {}
        shared = frozenset(c["strimzi_namespace"] for c in clusters.values()
                           if isinstance(c, dict) and isinstance(c.get("strimzi_namespace"), str))
        flows: dict[str, str] = {}
        users: dict[str, str] = {}
        secrets: dict[str, str] = {}
        prefixes: dict[str, str] = {}
        for name, tenant in (document.get("tenants") or {}).items():
            for principal in tenant.get("principals", []):
                if str(principal.get("name", "")).startswith("User:"):
                    _add(users, principal["name"][len("User:"):], name)
            for group in tenant.get("names", {}).get("principal_secrets", []):
                for secret in group:
                    _add(secrets, secret, name)
            for prefix in tenant.get("topic_prefixes", []):
                _add(prefixes, prefix, name)
            probe = tenant.get("names", {}).get("probe") or {}  # the tenant's probe user, when an slo flow has one
            _add(users, probe.get("user"), name)
            for secret in probe.get("secrets", []):
                _add(secrets, secret, name)
            for flow in tenant.get("flows", []):
                _add(flows, flow.get("id"), name)
                _add(users, flow.get("mm2_user"), name)
                for secret in flow.get("mm2_secrets", []):
                    _add(secrets, secret, name)
                for prefix in [*flow.get("remote_topic_prefixes", []), flow.get("internal_prefix")]:
                    _add(prefixes, prefix, name)
        ordered = tuple(sorted(prefixes.items(), key=lambda item: (-len(item[0]), item[0])))
        return cls(shared, flows, users, secrets, ordered)

    def owner(self, kind: str, obj: Mapping[str, Any], name: str) -> str:
        """The tenant that owns the object by what it is; "" when none (or two) do."""
        if kind == "KafkaMirrorMaker2":
            return self.flows.get(name, "")
        if kind == "KafkaUser":
            return self.users.get(name, "")
        if kind == "Secret":
            return self.secrets.get(name, "")
        if kind == "KafkaTopic":
            topic = topic_name(obj, name)
            found = [tenant for prefix, tenant in self.topic_prefixes if topic.startswith(prefix)]
            # Longest first: the longest prefix decides; one of equal length held by another tenant is a tie.
            return found[0] if found else ""
        return ""


def topic_name(obj: Mapping[str, Any], name: str) -> str:
    """The topic a KafkaTopic manages: `spec.topicName`, else the object's name (Strimzi's rule)."""
    spec = obj.get("spec")
    topic = spec.get("topicName") if isinstance(spec, dict) else None
    return topic if isinstance(topic, str) and topic else name


def resolve_tenant(kind: str, obj: Mapping[str, Any] | None, name: str, namespace: str,
                   namespace_labels: Mapping[str, Any], index: TenantIndex | None) -> tuple[str, str]:
    """(tenant, how): from the namespace's label, else in a Strimzi namespace from the repo's owner of
    what the object is; ("", "") when neither names one. Never from the object's own labels."""
    value = namespace_labels.get(TENANT_LABEL)
    if isinstance(value, str) and value:
        return value, "namespace"
    if index is not None and namespace in index.shared_namespaces and isinstance(obj, Mapping):
        owner = index.owner(kind, obj, name)
        if owner:
            return owner, "owner"
    return "", ""


# ---- facts for the policy ---------------------------------------------------------------------

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


def denial_message(violations: list[dict[str, Any]]) -> str:
    """Every violation on its own line: what the kubectl user sees."""
    lines = [f"[{v.get('rule')}] {v.get('message')}" for v in violations]
    return "mm2gov denied this object:\n" + "\n".join(lines)


def response(uid: str, allowed: bool, message: str = "", code: int = 403) -> dict[str, Any]:
    answer: dict[str, Any] = {"uid": uid, "allowed": allowed}
    if not allowed:
        answer["status"] = {"code": code, "reason": "Forbidden" if code == 403 else "BadRequest",
                            "message": message[:16_000]}
    return {"apiVersion": API_VERSION, "kind": "AdmissionReview", "response": answer}
