"""The AdmissionReview envelope: a request body in, a checked `request` out, an AdmissionReview back.

Nothing here trusts the request. A body that is not a well-formed `admission.k8s.io/v1`
AdmissionReview raises `BadReview` (the server answers HTTP 400, or a denial when a `uid`
could be read): one JSON object with distinct keys, bounded in size and depth, of a kind
mm2gov governs, whose object names the namespace and name the API server says.
"""

from __future__ import annotations

import json
from typing import Any

API_VERSION = "admission.k8s.io/v1"
MAX_BODY_BYTES = 3 * 1024 * 1024  # the API server's own limit for a request body is about 3 MiB
MAX_NESTING = 64
GOVERNED_KINDS = ("KafkaMirrorMaker2", "KafkaUser", "KafkaTopic", "Secret")

class BadReview(ValueError):
    """Not a usable AdmissionReview; `uid` is set when one could be read (answer with a denial)."""

    def __init__(self, message: str, uid: str | None = None) -> None:
        super().__init__(message)
        self.uid = uid


class _DuplicateKey(ValueError):
    """A JSON object with a key twice: raised inside json.loads, turned into a BadReview by parse_review."""


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
