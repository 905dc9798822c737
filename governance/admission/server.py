"""`mm2gov admission serve`: the ValidatingAdmissionWebhook over HTTPS (TLS 1.2+).

`POST /validate` takes an AdmissionReview and answers one with the same `uid`;
`GET /healthz` (the process serves), `/readyz` (a good repo is in OPA and the namespace
cache is filled; the body says when a newer repo on disk was refused) and `/metrics`
(Prometheus). Logs carry kind, namespace, name, result and rules,
never the object. Each connection is served by its own thread with keep-alive;
the TLS handshake happens in that thread, so a slow client cannot stall the others.
"""

from __future__ import annotations

import json
import logging
import ssl
import sys
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from governance.admission.decider import AdmissionDecider, Verdict
from governance.admission.envelope import MAX_BODY_BYTES, BadReview, denial_message, parse_review, response

log = logging.getLogger("mm2gov.admission")
# How long a thread may hold the GIL while another waits for it. Requests are short bursts of
# Python between socket waits; at the default 5 ms, a thread whose OPA answer had arrived could
# wait that long behind another's burst: p99 at 300 requests/s went from ~45 ms to ~15-25 ms.
GIL_SWITCH_INTERVAL = 0.0005


class StateCollector:
    """The decider's state, read at scrape time: the repo in force or refused, the namespace cache."""

    def __init__(self, decider: AdmissionDecider) -> None:
        self.decider = decider

    def collect(self):  # type: ignore[no-untyped-def]
        state = self.decider.sync.state
        yield GaugeMetricFamily("mm2gov_admission_repo_in_force",
                                "1 when a good governance repo is enforced", value=int(state.in_force))
        yield GaugeMetricFamily("mm2gov_admission_repo_refused",
                                "1 when the newest governance repo on disk is refused (invalid, or high/critical "
                                "violations) and the last good one, if any, stays in force",
                                value=int(bool(state.refused)))
        yield CounterMetricFamily("mm2gov_admission_repo_refusals",
                                  "Governance repos refused since start", value=state.refusals)
        yield CounterMetricFamily("mm2gov_admission_repo_adoptions",
                                  "Governance repos adopted since start", value=state.adopted)
        yield GaugeMetricFamily("mm2gov_admission_repo_adopted_timestamp_seconds",
                                "When the repo in force was adopted", value=state.adopted_at)
        namespaces = self.decider.namespaces
        status = namespaces.status() if namespaces is not None and hasattr(namespaces, "status") else {}
        yield GaugeMetricFamily("mm2gov_admission_namespace_cache_ready",
                                "1 once the namespace cache holds the API server's first list",
                                value=int(bool(status.get("ready"))))
        yield GaugeMetricFamily("mm2gov_admission_namespaces", "Namespaces in the cache",
                                value=status.get("namespaces", 0))
        yield CounterMetricFamily("mm2gov_admission_namespace_watch_restarts",
                                  "Namespace LISTs after the first (expired or failed watches)",
                                  value=status.get("restarts", 0))
        yield CounterMetricFamily("mm2gov_admission_namespace_cache_misses",
                                  "Namespaces read with a GET because the cache did not have them",
                                  value=status.get("misses", 0))


class Metrics:
    def __init__(self, decider: AdmissionDecider | None = None) -> None:
        self.registry = CollectorRegistry()
        if decider is not None:
            self.registry.register(StateCollector(decider))
        self.decisions = Counter("mm2gov_admission_decisions", "Admission decisions by result and kind",
                                 ["result", "kind"], registry=self.registry)
        self.violations = Counter("mm2gov_admission_violations", "Violations in denials, by rule", ["rule"],
                                  registry=self.registry)
        self.latency = Histogram("mm2gov_admission_duration_seconds", "Time to answer a review",
                                 buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0, 2.5),
                                 registry=self.registry)
        self.bad_requests = Counter("mm2gov_admission_bad_requests", "Requests that were not AdmissionReviews",
                                    registry=self.registry)

    def record(self, kind: str, verdict: Verdict, seconds: float) -> None:
        self.decisions.labels("allowed" if verdict.allowed else "denied", kind).inc()
        for violation in verdict.violations:
            self.violations.labels(str(violation.get("rule", "unknown"))).inc()
        if not verdict.allowed and not verdict.violations:
            self.violations.labels("fail_closed").inc()
        self.latency.observe(seconds)


class Headers(dict):
    """Request headers by lower-cased name; `get` takes any case, as email.message.Message's does."""

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return super().get(name.lower(), default)


class WebhookServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], decider: AdmissionDecider, tls: ssl.SSLContext) -> None:
        super().__init__(address, WebhookHandler)
        self.decider = decider
        self.metrics = Metrics(decider)
        self.tls = tls

    def handle_error(self, request, client_address) -> None:  # type: ignore[no-untyped-def]
        """A client that breaks off (bad TLS, reset) is a debug line, not a traceback on stderr."""
        log.debug("connection from %s ended with an error", client_address[0], exc_info=True)

    def get_request(self):  # type: ignore[no-untyped-def]
        sock, address = super().get_request()
        return self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(cert), str(key))
    return context


class WebhookHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the API server reuses connections
    server: WebhookServer
    timeout = 30
    # The answer leaves in one write (headers and body buffered, flushed after each request) with
    # TCP_NODELAY: written in two parts, the body waited for the client's delayed ACK of the
    # headers (Nagle), 40 ms on every keep-alive request from a Go client such as the API server.
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True

    def setup(self) -> None:
        super().setup()
        try:
            self.connection.do_handshake()  # type: ignore[attr-defined]
        except (ssl.SSLError, OSError):
            self.close_connection = True
            raise

    MAX_HEADER_LINE = 65_536
    MAX_HEADERS = 100

    def parse_request(self) -> bool:
        """The request line and headers, as BaseHTTPRequestHandler.parse_request reads them, without
        the email package (about a fifth of the webhook's CPU per request went to it). Stricter: a
        header given twice, or a line that is not `name: value`, is a bad request."""
        self.command = None
        self.request_version = "HTTP/1.0"  # what an error answer is written as (HTTP/0.9 would have no status)
        self.close_connection = True
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if len(words) != 3:
            self.send_error(HTTPStatus.BAD_REQUEST, "Bad request syntax")
            return False
        command, path, version = words
        if version not in ("HTTP/1.0", "HTTP/1.1"):
            self.send_error(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED if version.startswith("HTTP/")
                            else HTTPStatus.BAD_REQUEST, "Unsupported HTTP version")
            return False
        self.command, self.path, self.request_version = command, path, version
        self.close_connection = version != "HTTP/1.1"
        headers = Headers()
        for _ in range(self.MAX_HEADERS + 1):
            line = self.rfile.readline(self.MAX_HEADER_LINE + 1)
            if len(line) > self.MAX_HEADER_LINE:
                self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Line too long")
                return False
            if line in (b"\r\n", b"\n", b""):
                break
            name, colon, value = line.decode("iso-8859-1").partition(":")
            key = name.strip().lower()
            if not colon or not key or name != name.rstrip() or key in headers:
                self.send_error(HTTPStatus.BAD_REQUEST, "Bad header")
                return False
            headers[key] = value.strip()
        else:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Too many headers")
            return False
        self.headers = headers  # type: ignore[assignment]
        connection = headers.get("connection", "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        if headers.get("expect", "").lower() == "100-continue" and version == "HTTP/1.1":
            return self.handle_expect_100()
        return True

    def handle_expect_100(self) -> bool:
        """An interim 100 Continue must leave now: the buffered answer would hold it back."""
        proceed = super().handle_expect_100()
        self.wfile.flush()
        return proceed

    def handle(self) -> None:
        try:
            super().handle()
        except (ssl.SSLError, ConnectionError, TimeoutError):
            self.close_connection = True

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, document: dict) -> None:
        self._send(status, json.dumps(document, separators=(",", ":")).encode())

    def do_GET(self) -> None:
        if self.path == "/healthz":
            self._send(200, b"ok\n", "text/plain")
        elif self.path == "/readyz":
            ready, text = self.server.decider.readiness()
            self._send(200 if ready else 503, text.encode(), "text/plain")
        elif self.path == "/metrics":
            self._send(200, generate_latest(self.server.metrics.registry), CONTENT_TYPE_LATEST)
        else:
            self._send(404, b"not found\n", "text/plain")

    def do_POST(self) -> None:
        began = time.perf_counter()
        if self.path.split("?")[0] != "/validate":
            self._send(404, b"not found\n", "text/plain")
            return
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        try:
            length = int(self.headers.get("Content-Length") or "-1")
        except ValueError:
            length = -1
        if content_type != "application/json" or not 0 <= length <= MAX_BODY_BYTES:
            self.server.metrics.bad_requests.inc()
            self.close_connection = True  # the body (if any) is not read: the connection cannot be reused
            self._send_json(400 if content_type == "application/json" else 415,
                            {"error": "expected an application/json AdmissionReview with a Content-Length "
                                      f"of at most {MAX_BODY_BYTES} bytes"})
            return
        body = self.rfile.read(length)
        try:
            request = parse_review(body)
        except BadReview as exc:
            self.server.metrics.bad_requests.inc()
            log.warning("bad AdmissionReview: %s", exc)
            if exc.uid is None:
                self._send_json(400, {"error": str(exc)})
            else:
                self._send_json(200, response(exc.uid, False, f"mm2gov admission: malformed request: {exc}", 400))
            return
        verdict = self._decide(request)
        kind = request["kind"]["kind"]
        message = denial_message(list(verdict.violations)) if verdict.violations else verdict.reason
        self._send_json(200, response(request["uid"], verdict.allowed, message))
        seconds = time.perf_counter() - began
        self.server.metrics.record(kind[:64], verdict, seconds)
        if log.isEnabledFor(logging.INFO):  # the arguments cost more than the call when INFO is off
            log.info("%s %s %s/%s: %s%s (%.1f ms)", request["operation"], kind[:64],
                     request.get("namespace", "")[:64], request.get("name", "")[:64],
                     "allowed" if verdict.allowed else "denied",
                     "".join(f" {v.get('rule')}" for v in verdict.violations[:10]), seconds * 1000)

    def _decide(self, request: dict) -> Verdict:
        try:
            return self.server.decider.decide(request)
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, the answer is a denial
            log.error("decision failed: %s", type(exc).__name__)
            return Verdict(False, reason=f"mm2gov admission: internal error ({type(exc).__name__}); denied "
                                         "(fail closed)")

    def log_message(self, format: str, *args: object) -> None:
        if log.isEnabledFor(logging.DEBUG):  # called for every request: format only what is logged
            log.debug("%s %s", self.address_string(), format % args)


def serve(repo: Path, opa_url: str, cert: Path, key: Path, host: str, port: int, namespace_labels=None,
          reload_interval: float = 2.0, ready_callback=None, upload_policies=None) -> None:
    """Serve until interrupted (SIGINT/SIGTERM end `serve_forever` through the CLI's signal handler)."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)  # the process does nothing else: set it for all of it
    decider = AdmissionDecider(repo, opa_url, namespace_labels, upload_policies=upload_policies)
    if decider.namespaces is None:
        log.error("no namespace source (--kubeconfig or --in-cluster): the webhook cannot tell a request's tenant "
                  "and denies every review")
    elif hasattr(decider.namespaces, "start"):
        decider.namespaces.start()
        if not decider.namespaces.wait_ready(10):
            log.warning("the namespace cache is not filled after 10 s: reviews are denied until it is")
    decider.sync.load()
    decider.sync.watch(reload_interval)
    server = WebhookServer((host, port), decider, tls_context(cert, key))
    log.info("admission webhook on https://%s:%d/validate (repo %s, OPA %s)", host, server.server_address[1],
             repo, opa_url)
    if ready_callback is not None:
        ready_callback(server)
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        decider.stop()
        server.server_close()
