"""AdmissionReview in, policy input out, AdmissionReview back: the pure part of the webhook.

Nothing here trusts the request. A body that is not a well-formed `admission.k8s.io/v1`
AdmissionReview raises `BadReview` (the server answers HTTP 400, or a denial when a `uid`
could be read); every field the policy reads is type-checked first, so hostile input
becomes a denial, never an allow and never a crash.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from governance.config.regex import RegexProblem, analyse

API_VERSION = "admission.k8s.io/v1"
MAX_BODY_BYTES = 3 * 1024 * 1024  # the API server's own limit for a request body is about 3 MiB
MAX_NESTING = 64
TENANT_LABEL = "mm2gov.io/tenant"
GOVERNED_KINDS = ("KafkaMirrorMaker2", "KafkaUser", "KafkaTopic", "Secret")
PATTERN_FIELDS = ("topicsPattern", "topicsExcludePattern", "groupsPattern")
MAX_PATTERNS = 256


class BadReview(ValueError):
    """Not a usable AdmissionReview; `uid` is set when one could be read (answer with a denial)."""

    def __init__(self, message: str, uid: str | None = None) -> None:
        super().__init__(message)
        self.uid = uid


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


def parse_review(body: bytes) -> dict[str, Any]:
    """The `request` of an AdmissionReview, checked for the fields the webhook relies on."""
    if len(body) > MAX_BODY_BYTES:
        raise BadReview(f"request body over {MAX_BODY_BYTES} bytes")
    try:
        review = json.loads(body)
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
    for field in ("namespace", "name"):
        if not isinstance(request.get(field, ""), str):
            raise BadReview(f"request.{field} is not a string", uid)
    for field in ("object", "oldObject"):
        if request.get(field) is not None and not isinstance(request[field], dict):
            raise BadReview(f"request.{field} is not an object", uid)
    if request["operation"] in ("CREATE", "UPDATE") and not isinstance(request.get("object"), dict):
        raise BadReview("request.object is missing", uid)
    for field in ("object", "oldObject"):
        obj = request.get(field)
        if isinstance(obj, dict) and obj.get("kind") != kind["kind"]:
            raise BadReview(f"request.{field}.kind does not match request.kind ({kind['kind']})", uid)
    return request


def _labels(obj: dict[str, Any] | None) -> dict[str, Any]:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    return labels if isinstance(labels, dict) else {}


def tenant_of(obj: dict[str, Any] | None, namespace_labels: dict[str, str]) -> str:
    """The object's `mm2gov.io/tenant` label, else its namespace's; "" when neither names one."""
    for labels in (_labels(obj), namespace_labels):
        value = labels.get(TENANT_LABEL)
        if isinstance(value, str) and value:
            return value
    return ""


def _without_values(secret: dict[str, Any]) -> dict[str, Any]:
    """A Secret as the policy sees it: metadata, type and key names, never data."""
    keys = set()
    for field in ("data", "stringData"):
        if isinstance(secret.get(field), dict):
            keys |= {k for k in secret[field] if isinstance(k, str)}
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


def _patterns(obj: dict[str, Any]) -> dict[str, Any]:
    """Regex facts for every topics/groups pattern of a KafkaMirrorMaker2 (MM2 splits lists on commas)."""
    spec = obj.get("spec")
    mirrors = spec.get("mirrors") if isinstance(spec, dict) else None
    found: dict[str, Any] = {}
    for mirror in mirrors if isinstance(mirrors, list) else []:
        if not isinstance(mirror, dict):
            continue
        for field in PATTERN_FIELDS:
            text = mirror.get(field)
            if not isinstance(text, str):
                continue
            for regex in (part.strip() for part in text.split(",")):
                if not regex or regex in found:
                    continue
                if len(found) >= MAX_PATTERNS:
                    found[regex] = {"error": f"more than {MAX_PATTERNS} patterns"}
                    continue
                found[regex] = _facts(regex) if len(regex) <= 1024 else {"error": "pattern over 1024 characters"}
    return found


def policy_input(request: dict[str, Any], namespace_labels: dict[str, str],
                 old_namespace_labels: dict[str, str] | None = None) -> dict[str, Any]:
    """The document `data.mm2gov.admission.decision` is asked with (docs/policies.md, "Admission")."""
    kind = request["kind"]["kind"]
    obj = request.get("object") if isinstance(request.get("object"), dict) else request.get("oldObject")
    obj = obj if isinstance(obj, dict) else {}
    old = request.get("oldObject") if isinstance(request.get("oldObject"), dict) else None
    if kind == "Secret":
        obj = _without_values(obj)
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = request.get("name") or metadata.get("name") or ""
    return {
        "operation": request["operation"],
        "kind": kind,
        "namespace": request.get("namespace") or "",
        "name": name if isinstance(name, str) else "",
        "tenant": tenant_of(obj, namespace_labels),
        "old_tenant": tenant_of(old, old_namespace_labels or namespace_labels)
        if request["operation"] == "UPDATE" and old is not None else "",
        "object": obj,
        "patterns": _patterns(obj) if kind == "KafkaMirrorMaker2" else {},
    }


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
