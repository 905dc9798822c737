"""`mm2gov admission serve`: the ValidatingAdmissionWebhook over HTTPS (TLS 1.2+).

`POST /validate` takes an AdmissionReview and answers one with the same `uid`;
`GET /healthz` (the process serves), `/readyz` (a good repo is in OPA and the namespace
cache is filled; the body says when a newer repo on disk was refused) and `/metrics`
(Prometheus). Logs carry kind, namespace, name, result and rules,
never the object. Each connection is served by its own thread with keep-alive;
the TLS handshake happens in that thread, so a slow client cannot stall the others.
HTTP itself (parsing, limits, one write per answer) is `connection`'s.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import socketserver
import ssl
import sys
import time
from pathlib import Path

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from governance.admission.connection import HttpConnection, Refused, Request
from governance.admission.decider import AdmissionDecider, Verdict
from governance.admission.envelope import MAX_BODY_BYTES, BadReview, denial_message, parse_review, response
from governance.metrics import SnapshotRegistry

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
        self.registry = SnapshotRegistry()
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
        """One review's figures, all in one scrape or none."""
        with self.registry.lock:
            self.decisions.labels("allowed" if verdict.allowed else "denied", kind).inc()
            for violation in verdict.violations:
                self.violations.labels(str(violation.get("rule", "unknown"))).inc()
            if not verdict.allowed and not verdict.violations:
                self.violations.labels("fail_closed").inc()
            self.latency.observe(seconds)


class WebhookServer(socketserver.ThreadingTCPServer):
    """One thread per connection (TLS handshake included: a slow client cannot stall the others)."""

    allow_reuse_address = True
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


JSON, TEXT = "application/json", "text/plain"


def _json(document: dict) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode()


class WebhookHandler(socketserver.BaseRequestHandler):
    """One TLS connection: requests read by `connection.HttpConnection`, answered here, one at a time."""

    server: WebhookServer
    request: ssl.SSLSocket
    TIMEOUT = 30  # seconds a connection may stay silent, idle or in the middle of a request

    def handle(self) -> None:
        sock = self.request
        sock.settimeout(self.TIMEOUT)
        # Each answer leaves in one write (HttpConnection.send): with Nagle off, nothing waits for the client's
        # delayed ACK. Written in two parts, the body waited 40 ms on every keep-alive request from a Go client.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = HttpConnection(sock, MAX_BODY_BYTES)
        try:
            sock.do_handshake()
            for request in connection.requests():
                status, body, content_type = self._route(request)
                connection.send(status, body, content_type, close=not request.keep_alive)
                if not request.keep_alive:
                    return
        except Refused as refused:
            self.server.metrics.bad_requests.inc()
            log.debug("refused a request from %s: %d %s", self.client_address[0], refused.status, refused.why)
            with contextlib.suppress(OSError):  # gone already: nothing to tell
                connection.send(refused.status, _json({"error": refused.why}), JSON, close=True)
        except OSError:  # TLS failures, resets and timeouts among them: the client is gone
            log.debug("connection from %s ended", self.client_address[0], exc_info=True)

    def _route(self, request: Request) -> tuple[int, bytes, str]:
        path, method = request.path, request.method
        if path == "/validate":
            if method != "POST":
                return 405, b"POST only\n", TEXT
            return self._validate(request)
        if path in ("/healthz", "/readyz", "/metrics") and method != "GET":
            return 405, b"GET only\n", TEXT
        if path == "/healthz":
            return 200, b"ok\n", TEXT
        if path == "/readyz":
            ready, text = self.server.decider.readiness()
            return (200 if ready else 503), text.encode(), TEXT
        if path == "/metrics":
            return 200, generate_latest(self.server.metrics.registry), CONTENT_TYPE_LATEST
        return 404, b"not found\n", TEXT

    def _validate(self, http: Request) -> tuple[int, bytes, str]:
        began = time.perf_counter()
        if http.content_type != JSON:
            self.server.metrics.bad_requests.inc()
            return 415, _json({"error": "expected an application/json AdmissionReview"}), JSON
        try:
            request = parse_review(http.body)
        except BadReview as exc:
            self.server.metrics.bad_requests.inc()
            log.warning("bad AdmissionReview: %s", exc)
            if exc.uid is None:
                return 400, _json({"error": str(exc)}), JSON
            return 200, _json(response(exc.uid, False, f"mm2gov admission: malformed request: {exc}", 400)), JSON
        verdict = self._decide(request)
        kind = request["kind"]["kind"]
        message = denial_message(list(verdict.violations)) if verdict.violations else verdict.reason
        answer = _json(response(request["uid"], verdict.allowed, message))
        seconds = time.perf_counter() - began
        self.server.metrics.record(kind[:64], verdict, seconds)
        if log.isEnabledFor(logging.INFO):  # the arguments cost more than the call when INFO is off
            log.info("%s %s %s/%s: %s%s (%.1f ms)", request["operation"], kind[:64],
                     request.get("namespace", "")[:64], request.get("name", "")[:64],
                     "allowed" if verdict.allowed else "denied",
                     "".join(f" {v.get('rule')}" for v in verdict.violations[:10]), seconds * 1000)
        return 200, answer, JSON

    def _decide(self, request: dict) -> Verdict:
        try:
            return self.server.decider.decide(request)
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, the answer is a denial
            log.error("decision failed: %s", type(exc).__name__)
            return Verdict(False, reason=f"mm2gov admission: internal error ({type(exc).__name__}); denied "
                                         "(fail closed)")


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
