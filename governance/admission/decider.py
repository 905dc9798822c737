"""The webhook's decisions: the governance repo as OPA data, each review asked of
`data.mm2gov.admission.decision`, and every failure on the way turned into a denial.

The repo (clusters.yaml, tenants/*.yaml) is pushed to OPA once as `data.mm2gov_repo`
and again whenever its files change on disk; a review sends only the object. An
invalid repo on disk keeps the last good one in force (and says so in the log);
OPA down, a timeout, an evaluation error or a malformed decision all deny.
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
from typing import Any, BinaryIO
from urllib.parse import urlparse

from governance.admission.review import policy_input
from governance.config import load_inventory
from governance.errors import MM2GovError
from governance.policy.input import build_input

log = logging.getLogger("mm2gov.admission")
DECISION_PATH = "/v1/data/mm2gov/admission/decision"
REPO_DATA_PATH = "/v1/data/mm2gov_repo"
SCOPES_DATA_PATH = "/v1/data/mm2gov_scopes"  # optional: makes grants received one lookup


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


class AdmissionDecider:
    def __init__(self, repo: Path, opa_url: str, namespace_labels=None, timeout: float = 2.0,
                 upload_policies=None) -> None:
        self.repo = repo
        self.upload_policies = upload_policies  # callable: put the policy modules back into a restarted OPA
        self.opa = OpaConnection(opa_url, timeout)
        self.namespace_labels = namespace_labels  # callable namespace -> labels, or None
        self.signature: tuple = ()
        self.document: dict[str, Any] | None = None  # the last good repo, as pushed to OPA
        self.loaded = False
        self._stop = threading.Event()

    # -- the repo as OPA data -----------------------------------------------------------------
    def load_repo(self) -> bool:
        """Keep OPA's copy of the repo current: re-read it when its files change (an invalid repo
        keeps the last good one), and push it again when OPA lost it (a restarted OPA)."""
        signature = repo_signature(self.repo)
        if signature != self.signature or self.document is None:
            self.signature = signature
            try:
                document = build_input(load_inventory(self.repo))
            except MM2GovError as exc:
                log.error("governance repo %s is invalid, keeping the last good one: %s", self.repo,
                          str(exc).splitlines()[0])
                return False
            document.pop("locations", None)
            self.document, self.loaded = document, False
        if self.loaded and self._opa_has_repo():
            return True
        try:
            if self.loaded and self.upload_policies is not None:  # OPA lost the data: it restarted
                log.warning("OPA lost the governance repo (restarted?): uploading policies and repo again")
                self.upload_policies()
            self.opa.request("DELETE", SCOPES_DATA_PATH)  # never new repo data with old scopes
            status, _ = self.opa.request("PUT", REPO_DATA_PATH, self.document)
            if status < 300:
                self._push_scopes()
        except (OSError, http.client.HTTPException, MM2GovError) as exc:
            log.error("cannot push the governance repo to OPA: %s", type(exc).__name__)
            return False
        if status >= 300:
            log.error("OPA refused the governance repo: HTTP %d", status)
            return False
        self.loaded = True
        log.info("governance repo %s pushed to OPA (%d tenants)", self.repo, len(self.document["tenants"]))
        return True

    def _push_scopes(self) -> None:
        """The repo decision's scopes as data: the admission rules read a tenant's grants from them."""
        status, body = self.opa.request("POST", "/v1/data/mm2gov/decision", {"input": self.document})
        try:
            scopes = json.loads(body)["result"]["scopes"] if status == 200 else None
        except (ValueError, KeyError, TypeError):
            scopes = None
        if isinstance(scopes, dict):
            self.opa.request("PUT", SCOPES_DATA_PATH, scopes)
        else:
            log.warning("no scopes from the repo decision (HTTP %d): grants are looked up the slow way", status)

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

    def ready(self) -> bool:
        return self.loaded and self._opa_has_repo()

    # -- decisions ----------------------------------------------------------------------------
    def decide(self, request: dict[str, Any]) -> Verdict:
        if not self.loaded:
            return Verdict(False, reason="mm2gov admission: the governance repo is not loaded yet; denied "
                                         "(fail closed)")
        try:
            labels = self._labels(request.get("namespace") or "")
        except Exception as exc:  # noqa: BLE001 - an unknown namespace is no reason to allow
            return Verdict(False, reason=f"mm2gov admission: cannot read the labels of namespace "
                                         f"{request.get('namespace')!r} ({type(exc).__name__}); denied (fail closed)")
        document = {"input": policy_input(request, labels)}
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

    def _labels(self, namespace: str) -> dict[str, str]:
        if not namespace or self.namespace_labels is None:
            return {}
        return self.namespace_labels(namespace)


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


class NamespaceLabels:
    """Namespace labels from the API server, cached for `ttl` seconds (a tenant label rarely changes)."""

    def __init__(self, api_client: Any, ttl: float = 30.0) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.ttl = ttl
        self._cache: dict[str, tuple[float, dict[str, str]]] = {}
        self._lock = threading.Lock()

    def __call__(self, namespace: str) -> dict[str, str]:
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(namespace)
        if cached and now - cached[0] < self.ttl:
            return cached[1]
        labels = dict(self.core.read_namespace(namespace, _request_timeout=2).metadata.labels or {})
        with self._lock:
            self._cache[namespace] = (now, labels)
        return labels
