"""The webhook's decisions: the governance repo as OPA data, the namespaces as the API
server has them, each review asked of `data.mm2gov.admission.decision`, and every failure
on the way turned into a denial.

The repo (clusters.yaml, tenants/*.yaml) is pushed to OPA once as `data.mm2gov_repo`
and again whenever its files change on disk; a review sends only the object. A repo on
disk that does not load, or that the repo decision (`data.mm2gov.decision`) finds high or
critical violations in, is refused: the last good one stays in force, the refusal is
logged, shown by /readyz and counted in /metrics. Namespaces come from a watch of the API
server (`NamespaceWatch`): an unknown namespace, a cache not yet filled, OPA down, a
timeout, an evaluation error or a malformed decision all deny.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol
from urllib.parse import urlparse

from governance.admission.review import TenantIndex, policy_input
from governance.config import load_inventory
from governance.errors import MM2GovError
from governance.policy.input import build_input

log = logging.getLogger("mm2gov.admission")
DECISION_PATH = "/v1/data/mm2gov/admission/decision"
REPO_DATA_PATH = "/v1/data/mm2gov_repo"
SCOPES_DATA_PATH = "/v1/data/mm2gov_scopes"  # optional: makes grants received one lookup
REPO_DECISION_PATH = "/v1/data/mm2gov/decision"
BLOCKING_SEVERITIES = ("high", "critical")  # a repo with violations of these is never enforced


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    violations: tuple[dict[str, Any], ...] = ()
    reason: str = ""  # why a denial happened without violations (fail closed)


class OpaConnection:
    """Keep-alive HTTP/1.1 to OPA, one connection per thread (a connection carries one request at a time).

    A small client rather than http.client, which writes a request's headers and body in two
    sends and parses response headers with the email package: together about 0.4 ms of every
    decision. Errors are OSError or http.client.HTTPException, as with http.client.
    """

    MAX_LINE = 65_536
    MAX_HEADERS = 100

    def __init__(self, url: str, timeout: float) -> None:
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise MM2GovError(f"invalid OPA URL {url!r}")
        self.host, self.port = parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80)
        self.host_header = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
        self.tls = ssl.create_default_context() if parsed.scheme == "https" else None
        self.timeout = timeout
        self._local = threading.local()

    def _connection(self) -> tuple[socket.socket, BinaryIO]:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_hostname=self.host)
            connection = self._local.connection = (sock, sock.makefile("rb"))
        return connection

    def _close(self) -> None:
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection[1].close()
            connection[0].close()

    def request(self, method: str, path: str, document: Any = None) -> tuple[int, bytes]:
        body = b"" if document is None else json.dumps(document).encode()
        message = (f"{method} {path} HTTP/1.1\r\nHost: {self.host_header}\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        for attempt in (1, 2):  # a keep-alive connection OPA closed is retried once, fresh
            try:
                sock, reader = self._connection()
                sock.sendall(message)  # one write: no wait for a delayed ACK between headers and body
                status, answer, keep = self._response(reader)
            except (OSError, http.client.HTTPException):
                self._close()
                if attempt == 2:
                    raise
                continue
            if not keep:
                self._close()
            return status, answer
        raise AssertionError("unreachable")

    def _line(self, reader: BinaryIO) -> bytes:
        line = reader.readline(self.MAX_LINE + 1)
        if len(line) > self.MAX_LINE:
            raise http.client.LineTooLong("OPA response line")
        return line

    def _response(self, reader: BinaryIO) -> tuple[int, bytes, bool]:
        """(status, body, whether the connection stays open) of one response."""
        line = self._line(reader)
        if not line:
            raise http.client.RemoteDisconnected("OPA closed the connection")
        version, _, rest = line.partition(b" ")
        try:
            status = int(rest[:3])
        except ValueError:
            raise http.client.BadStatusLine(line[:100].decode("latin-1")) from None
        if not version.startswith(b"HTTP/1.") or not 200 <= status < 600:  # no 1xx: no Expect is sent
            raise http.client.BadStatusLine(line[:100].decode("latin-1"))
        length, chunked, keep = -1, False, version == b"HTTP/1.1"
        for _ in range(self.MAX_HEADERS + 1):
            line = self._line(reader)
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.partition(b":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    raise http.client.HTTPException("bad Content-Length from OPA") from None
            elif name == b"transfer-encoding":
                chunked = value.endswith(b"chunked")
            elif name == b"connection":
                keep = value != b"close" and (keep or value == b"keep-alive")
        else:
            raise http.client.HTTPException("too many headers from OPA")
        if status in (204, 304):
            return status, b"", keep
        if chunked:
            return status, self._chunks(reader), keep
        if length >= 0:
            body = reader.read(length)
            if len(body) < length:
                raise http.client.IncompleteRead(body, length - len(body))
            return status, body, keep
        return status, reader.read(), False  # delimited by the end of the connection

    def _chunks(self, reader: BinaryIO) -> bytes:
        parts = []
        while True:
            try:
                size = int(self._line(reader).split(b";")[0], 16)
            except ValueError:
                raise http.client.HTTPException("bad chunk size from OPA") from None
            if size == 0:
                break
            part = reader.read(size + 2)
            if len(part) < size + 2:
                raise http.client.IncompleteRead(part, size + 2 - len(part))
            parts.append(part[:size])
        while self._line(reader) not in (b"\r\n", b"\n", b""):  # trailers
            pass
        return b"".join(parts)


def repo_signature(root: Path) -> tuple:
    """What a change on disk looks like: names, sizes and mtimes of the repo's YAML files."""
    files = [root / "clusters.yaml", *sorted((root / "tenants").glob("*.y*ml"))]
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files if p.exists())


# ---- namespaces ---------------------------------------------------------------------------------

class NamespaceSource(Protocol):
    """Where the webhook reads a namespace's labels: `lookup` is None for a namespace it does not know."""

    def ready(self) -> bool: ...

    def lookup(self, namespace: str) -> dict[str, str] | None: ...


class StaticNamespaces:
    """Fixed namespaces and their labels (tests, benchmarks and tools; never in a cluster)."""

    def __init__(self, namespaces: dict[str, dict[str, str]]) -> None:
        self.namespaces = namespaces

    def ready(self) -> bool:
        return True

    def lookup(self, namespace: str) -> dict[str, str] | None:
        return self.namespaces.get(namespace)

    def status(self) -> dict[str, Any]:
        return {"ready": True, "namespaces": len(self.namespaces), "restarts": 0, "misses": 0}


class NamespaceWatch:
    """Every namespace's labels, as the API server has them: one LIST, then a WATCH from its
    resourceVersion (bookmarks keep it current), LIST again when the watch expires (410 Gone) or
    fails (after a back-off), so a missed event is repaired. Ready once the first LIST is in.

    A namespace not in the cache (created a moment ago, its event still on the way) is read once
    with a GET; one that does not exist is unknown, and the webhook denies.
    """

    def __init__(self, api_client: Any, watch_seconds: int = 240, request_timeout: float = 10.0,
                 max_backoff: float = 30.0) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.watch_seconds = watch_seconds
        self.request_timeout = request_timeout
        self.max_backoff = max_backoff
        self.resource_version: str | None = None
        self.restarts = 0  # LISTs after the first: expired or failed watches
        self.misses = 0  # lookups the cache could not answer (a GET was made)
        self.last_error = ""
        self._labels: dict[str, dict[str, str]] = {}
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watch: Any = None

    # -- the cache ---------------------------------------------------------------------------
    def ready(self) -> bool:
        return self._ready.is_set()

    def lookup(self, namespace: str) -> dict[str, str] | None:
        labels = self._labels.get(namespace)
        if labels is not None or not namespace or not self._ready.is_set():
            return labels
        self.misses += 1
        return self._read(namespace)

    def _read(self, namespace: str) -> dict[str, str] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            answer = self.core.read_namespace(namespace, _request_timeout=2, _preload_content=False)
            metadata = json.loads(answer.data).get("metadata") or {}
        except ApiException as exc:
            if exc.status != 404:
                log.warning("cannot read namespace %s: HTTP %s", namespace[:64], exc.status)
            return None
        except Exception as exc:  # noqa: BLE001 - unreadable is unknown: the webhook denies
            log.warning("cannot read namespace %s: %s", namespace[:64], type(exc).__name__)
            return None
        labels = _labels_of(metadata)
        if labels is not None and metadata.get("name") == namespace:
            self._labels.setdefault(namespace, labels)  # the watch's own event, when it comes, wins
        return labels

    def status(self) -> dict[str, Any]:
        return {"ready": self.ready(), "namespaces": len(self._labels), "restarts": self.restarts,
                "misses": self.misses, "last_error": self.last_error}

    # -- list and watch ----------------------------------------------------------------------
    def start(self) -> threading.Thread:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="mm2gov-namespace-watch", daemon=True)
            self._thread.start()
        return self._thread

    def stop(self) -> None:
        self._stop.set()
        if self._watch is not None:
            self._watch.stop()

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout)

    def _run(self) -> None:
        from kubernetes.client.exceptions import ApiException

        backoff, listed = 0.5, False
        while not self._stop.is_set():
            try:
                if not listed:
                    self._list()
                    listed, backoff = True, 0.5
                self._stream()  # returns when the watch times out: watch again from the last version
            except ApiException as exc:
                listed = False
                if exc.status == 410:  # the version expired: list again now
                    log.info("namespace watch expired (410 Gone): listing again")
                    self.restarts += 1
                    continue
                self._failed(f"HTTP {exc.status}", backoff)
                backoff = min(backoff * 2, self.max_backoff)
            except Exception as exc:  # noqa: BLE001 - whatever broke, list again after a pause
                listed = False
                self._failed(type(exc).__name__, backoff)
                backoff = min(backoff * 2, self.max_backoff)

    def _failed(self, why: str, backoff: float) -> None:
        self.last_error = why
        self.restarts += 1
        log.warning("namespace watch failed (%s): listing again in %.1f s (the cache stays as it was)", why, backoff)
        self._stop.wait(backoff)

    def _list(self) -> None:
        answer = self.core.list_namespace(_request_timeout=self.request_timeout, _preload_content=False)
        listing = json.loads(answer.data)
        labels = {}
        for item in listing.get("items") or []:
            metadata = item.get("metadata") or {}
            found = _labels_of(metadata)
            if isinstance(metadata.get("name"), str) and found is not None:
                labels[metadata["name"]] = found
        self._labels = labels  # one swap: a namespace deleted while the watch was down is gone now
        self.resource_version = (listing.get("metadata") or {}).get("resourceVersion")
        if not self._ready.is_set():
            log.info("namespace cache filled: %d namespaces", len(labels))
        self._ready.set()

    def _stream(self) -> None:
        from kubernetes import watch

        self._watch = watch.Watch()
        for event in self._watch.stream(self.core.list_namespace, resource_version=self.resource_version,
                                        allow_watch_bookmarks=True, timeout_seconds=self.watch_seconds,
                                        _request_timeout=self.watch_seconds + self.request_timeout):
            if self._stop.is_set():
                self._watch.stop()
                return
            raw = event.get("raw_object") if isinstance(event, dict) else None
            metadata = raw.get("metadata") if isinstance(raw, dict) else None
            if not isinstance(metadata, dict):
                continue
            kind, name = event.get("type"), metadata.get("name")
            if kind in ("ADDED", "MODIFIED") and isinstance(name, str):
                labels = _labels_of(metadata)
                if labels is not None:
                    self._labels[name] = labels
            elif kind == "DELETED" and isinstance(name, str):
                self._labels.pop(name, None)
            if isinstance(metadata.get("resourceVersion"), str):
                self.resource_version = metadata["resourceVersion"]


def _labels_of(metadata: dict[str, Any]) -> dict[str, str] | None:
    labels = metadata.get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else None


class _CallableNamespaces:
    """A plain function namespace -> labels (older callers); an exception means unknown."""

    def __init__(self, function: Any) -> None:
        self.function = function

    def ready(self) -> bool:
        return True

    def lookup(self, namespace: str) -> dict[str, str] | None:
        try:
            return dict(self.function(namespace))
        except Exception:  # noqa: BLE001 - unknown: the webhook denies
            return None

    def status(self) -> dict[str, Any]:
        return {"ready": True, "namespaces": 0, "restarts": 0, "misses": 0}


def namespace_source(value: Any) -> Any:
    if value is None or hasattr(value, "lookup"):
        return value
    return _CallableNamespaces(value)


# ---- the repo -----------------------------------------------------------------------------------

class _NoDecision(Exception):
    """OPA answered the repo decision without a result (its policies are missing)."""


@dataclass
class RepoState:
    """What /readyz and /metrics say about the governance repo."""

    in_force: bool = False  # a good repo was adopted (pushed to OPA at least once)
    refused: str = ""  # why the newest repo on disk is not the one in force ("" when it is)
    refusals: int = 0  # repos refused since start
    adopted: int = 0  # repos adopted since start
    adopted_at: float = 0.0


class AdmissionDecider:
    def __init__(self, repo: Path, opa_url: str, namespace_labels=None, timeout: float = 2.0,
                 upload_policies=None) -> None:
        self.repo = repo
        self.upload_policies = upload_policies  # callable: put the policy modules back into a restarted OPA
        self.opa = OpaConnection(opa_url, timeout)
        self.namespaces = namespace_source(namespace_labels)  # NamespaceSource, or None (every review denied)
        self.signature: tuple = ()
        self.document: dict[str, Any] | None = None  # the last good repo, as pushed to OPA
        self.scopes: Any = None
        self.index = TenantIndex()
        self.loaded = False  # OPA holds self.document
        self.state = RepoState()
        self._stop = threading.Event()

    # -- the repo as OPA data -----------------------------------------------------------------
    def load_repo(self) -> bool:
        """Keep OPA's copy of the repo current: consider the repo on disk when its files change
        (a repo that does not load or has high/critical violations is refused and the last good
        one kept), and push the one in force again when OPA lost it (a restarted OPA)."""
        signature = repo_signature(self.repo)
        if signature != self.signature and not self._consider(signature):
            return False
        if self.document is None:
            return False
        return self._push()

    def _consider(self, signature: tuple) -> bool:
        """Adopt or refuse the repo on disk; False when it could not be judged (OPA down): retried."""
        try:
            candidate = build_input(load_inventory(self.repo))
        except MM2GovError as exc:
            self.signature = signature
            self._refuse(f"it does not load: {str(exc).splitlines()[0][:300]}")
            return True
        candidate.pop("locations", None)
        try:
            decision = self._repo_decision(candidate)
        except (OSError, http.client.HTTPException) as exc:
            log.error("cannot judge the governance repo on disk (OPA: %s); checking again", type(exc).__name__)
            return False
        except _NoDecision:
            log.error("OPA gave no repo decision (policies missing?); checking again")
            if self.upload_policies is not None:
                try:
                    self.upload_policies()
                except Exception as exc:  # noqa: BLE001 - tried again at the next check
                    log.error("cannot upload the policies to OPA: %s", type(exc).__name__)
            return False
        self.signature = signature
        violations = decision.get("violations")
        blocking = sorted({str(v.get("rule")) for v in violations if isinstance(v, dict)
                           and v.get("severity") in BLOCKING_SEVERITIES}) if isinstance(violations, list) else ["?"]
        if blocking:
            count = sum(1 for v in violations if isinstance(v, dict) and v.get("severity") in BLOCKING_SEVERITIES) \
                if isinstance(violations, list) else 0
            self._refuse(f"it has {count} high or critical violation(s): {', '.join(blocking[:10])}")
            return True
        self.document, self.scopes, self.loaded = candidate, decision.get("scopes"), False
        self.index = TenantIndex.from_document(candidate)
        self.state.refused = ""
        self.state.adopted += 1
        self.state.adopted_at = time.time()
        return True

    def _refuse(self, why: str) -> None:
        self.state.refused = why
        self.state.refusals += 1
        if self.document is None:
            log.error("governance repo %s refused, and no good one was loaded before: every review is denied; "
                      "%s", self.repo, why)
        else:
            log.error("governance repo %s refused, keeping the last good one in force: %s", self.repo, why)

    def _repo_decision(self, document: dict[str, Any]) -> dict[str, Any]:
        status, body = self.opa.request("POST", REPO_DECISION_PATH, {"input": {**document, "locations": {}}})
        try:
            result = json.loads(body).get("result") if status == 200 else None
        except (ValueError, AttributeError):
            result = None
        if not isinstance(result, dict) or not isinstance(result.get("violations"), list):
            raise _NoDecision
        return result

    def _push(self) -> bool:
        if self.loaded and self._opa_has_repo():
            return True
        try:
            if self.loaded and self.upload_policies is not None:  # OPA lost the data: it restarted
                log.warning("OPA lost the governance repo (restarted?): uploading policies and repo again")
                self.upload_policies()
            self.opa.request("DELETE", SCOPES_DATA_PATH)  # never new repo data with old scopes
            status, _ = self.opa.request("PUT", REPO_DATA_PATH, self.document)
            if status < 300 and isinstance(self.scopes, dict):
                self.opa.request("PUT", SCOPES_DATA_PATH, self.scopes)
        except (OSError, http.client.HTTPException, MM2GovError) as exc:
            log.error("cannot push the governance repo to OPA: %s", type(exc).__name__)
            return False
        if status >= 300:
            log.error("OPA refused the governance repo: HTTP %d", status)
            return False
        self.loaded = self.state.in_force = True
        log.info("governance repo %s pushed to OPA (%d tenants)", self.repo, len(self.document["tenants"]))
        return True

    def _opa_has_repo(self) -> bool:
        try:
            status, body = self.opa.request("GET", REPO_DATA_PATH + "/clusters")
        except (OSError, http.client.HTTPException):
            return False
        return status == 200 and b'"result"' in body

    def watch(self, interval: float) -> threading.Thread:
        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    self.load_repo()
                except Exception:
                    log.exception("reloading the governance repo failed")

        thread = threading.Thread(target=loop, name="mm2gov-repo-watch", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
        if self.namespaces is not None and hasattr(self.namespaces, "stop"):
            self.namespaces.stop()

    def readiness(self) -> tuple[bool, str]:
        """(ready, what /readyz says): a good repo in OPA and a filled namespace cache."""
        problems = []
        if self.document is None:
            problems.append("no good governance repo was ever loaded"
                            + (f" (the repo on disk is refused: {self.state.refused})" if self.state.refused else ""))
        elif not (self.loaded and self._opa_has_repo()):
            problems.append("OPA does not hold the governance repo")
        if self.namespaces is None:
            problems.append("no namespace source (--kubeconfig or --in-cluster): every review is denied")
        elif not self.namespaces.ready():
            problems.append("the namespace cache is not filled yet")
        if problems:
            return False, "not ready: " + "; ".join(problems) + "\n"
        if self.state.refused:
            return True, (f"ready; the newer governance repo on disk is refused ({self.state.refused}): "
                          "the last good one stays in force\n")
        return True, "ready\n"

    def ready(self) -> bool:
        return self.readiness()[0]

    # -- decisions ----------------------------------------------------------------------------
    def decide(self, request: dict[str, Any]) -> Verdict:
        if not self.loaded:
            why = f" (the repo on disk is refused: {self.state.refused})" if self.state.refused else ""
            return Verdict(False, reason=f"mm2gov admission: no governance repo is loaded{why}; denied "
                                         "(fail closed)")
        namespace = request.get("namespace") or ""
        if self.namespaces is None:
            return Verdict(False, reason="mm2gov admission: the webhook has no namespace source, so it cannot "
                                         "tell the tenant; denied (fail closed)")
        if not self.namespaces.ready():
            return Verdict(False, reason="mm2gov admission: the namespace cache is not filled yet; denied "
                                         "(fail closed)")
        labels = self.namespaces.lookup(namespace)
        if labels is None:
            return Verdict(False, reason=f"mm2gov admission: namespace {namespace[:253]!r} is unknown to the "
                                         "API server; denied (fail closed)")
        document = {"input": policy_input(request, labels, self.index)}
        began = time.perf_counter()
        try:
            status, body = self.opa.request("POST", DECISION_PATH, document)
        except (OSError, http.client.HTTPException) as exc:
            return Verdict(False, reason=f"mm2gov admission: policy engine (OPA) unreachable "
                                         f"({type(exc).__name__}); denied (fail closed)")
        log.debug("OPA answered in %.1f ms", (time.perf_counter() - began) * 1000)
        if status != 200:
            return Verdict(False, reason=f"mm2gov admission: policy evaluation failed (OPA HTTP {status}); "
                                         "denied (fail closed)")
        return parse_verdict(body)


def parse_verdict(body: bytes) -> Verdict:
    """OPA's answer → Verdict; anything but a well-formed decision is a denial."""
    try:
        result = json.loads(body).get("result")
    except (ValueError, AttributeError):
        result = None
    if not isinstance(result, dict) or not isinstance(result.get("allowed"), bool) \
            or not isinstance(result.get("violations"), list):
        return Verdict(False, reason="mm2gov admission: the policy returned no decision (is the admission "
                                     "package loaded?); denied (fail closed)")
    violations = tuple(v for v in result["violations"] if isinstance(v, dict))
    allowed = result["allowed"] and not violations and len(violations) == len(result["violations"])
    if not allowed and not violations:
        return Verdict(False, reason="mm2gov admission: denied without a reason from the policy (fail closed)")
    return Verdict(allowed, violations)




# The name `mm2gov admission serve` has always used for its namespace source.
NamespaceLabels = NamespaceWatch
