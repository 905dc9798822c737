"""`mm2gov probe --serve`: probe runs every `--interval` seconds, their figures as Prometheus metrics per tenant
and flow (the alert rules and dashboards read these names; docs/probe.md lists them).

`ProbeMetrics.record` is the whole mapping from one run to the metrics (tested without a cluster); `serve`
is the loop: a run that fails (a cluster down, the probe user refused) is counted `result="error"` with its
reason logged, and the next interval tries again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from prometheus_client import Counter, Gauge, Histogram, start_http_server

from governance.errors import MM2GovError
from governance.metrics import SnapshotRegistry
from governance.probe.assess import ProbeResult

log = logging.getLogger("mm2gov.probe")
LABELS = ("tenant", "flow")
# end-to-end latency of a canary: sub-second on a healthy flow, minutes during an outage
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)


class ProbeMetrics:
    def __init__(self, registry: SnapshotRegistry | None = None) -> None:
        self.registry = registry or SnapshotRegistry()
        r = self.registry
        self.latency = Histogram("mm2gov_probe_latency_seconds", "End-to-end latency of each delivered canary "
                                 "(send on the source to read on the target)", LABELS, buckets=LATENCY_BUCKETS,
                                 registry=r)
        self.latency_p99 = Gauge("mm2gov_probe_latency_p99_seconds", "p99 end-to-end latency of the last run "
                                 "(NaN when nothing arrived)", LABELS, registry=r)
        self.slo_latency_p99 = Gauge("mm2gov_probe_slo_latency_p99_seconds", "The flow's slo.latency_p99_ms, in "
                                     "seconds", LABELS, registry=r)
        self.sent = Counter("mm2gov_probe_canaries_sent", "Canaries the source acknowledged", LABELS, registry=r)
        self.delivered = Counter("mm2gov_probe_canaries_delivered", "Sent canaries read back on the target",
                                 LABELS, registry=r)
        self.lost = Counter("mm2gov_probe_canaries_lost", "Sent canaries not read back within the run's wait",
                            LABELS, registry=r)
        self.duplicated = Counter("mm2gov_probe_canaries_duplicated", "Canary copies beyond the first", LABELS,
                                  registry=r)
        self.reordered = Counter("mm2gov_probe_canaries_reordered", "Canaries read out of their partition's order",
                                 LABELS, registry=r)
        self.misplaced = Counter("mm2gov_probe_canaries_misplaced", "Canary copies in another partition number "
                                 "than the one written to", LABELS, registry=r)
        self.foreign = Counter("mm2gov_probe_foreign_records", "Records in a run's window that are not its "
                               "canaries (earlier runs' arriving late, anything else)", LABELS, registry=r)
        self.runs = Counter("mm2gov_probe_runs", "Probe runs by result: ok, slo_missed, error",
                            (*LABELS, "result"), registry=r)
        self.slo_met = Gauge("mm2gov_probe_slo_met", "1 when the last run met the flow's SLO, 0 when it missed it "
                             "or failed", LABELS, registry=r)
        self.last_run = Gauge("mm2gov_probe_last_run_timestamp_seconds", "When the last run ended (any result)",
                              LABELS, registry=r)

    def record(self, tenant: str, flow: str, slo_p99_ms: int, result: ProbeResult, misses: list[str],
               now: float) -> None:
        """One run's figures, all in one scrape or none."""
        with self.registry.lock:
            self._record(tenant, flow, slo_p99_ms, result, misses, now)

    def _record(self, tenant: str, flow: str, slo_p99_ms: int, result: ProbeResult, misses: list[str],
                now: float) -> None:
        labels = {"tenant": tenant, "flow": flow}
        for latency_ms in result.latencies_ms:
            self.latency.labels(**labels).observe(latency_ms / 1000)
        self.latency_p99.labels(**labels).set(result.latency.p99_ms / 1000 if result.latency else float("nan"))
        self.slo_latency_p99.labels(**labels).set(slo_p99_ms / 1000)
        for counter, value in ((self.sent, result.sent), (self.delivered, result.delivered),
                               (self.lost, len(result.lost)), (self.duplicated, result.duplicated),
                               (self.reordered, result.reordered), (self.misplaced, result.misplaced),
                               (self.foreign, result.foreign)):
            counter.labels(**labels).inc(value)
        self.runs.labels(**labels, result="slo_missed" if misses else "ok").inc()
        self.slo_met.labels(**labels).set(0 if misses else 1)
        self.last_run.labels(**labels).set(now)

    def failed(self, tenant: str, flow: str, now: float) -> None:
        labels = {"tenant": tenant, "flow": flow}
        with self.registry.lock:
            self.runs.labels(**labels, result="error").inc()
            self.slo_met.labels(**labels).set(0)
            self.last_run.labels(**labels).set(now)


def serve(metrics: ProbeMetrics, runs: list[Callable[[ProbeMetrics], None]], host: str, port: int,
          interval: float, stop: threading.Event) -> None:
    """Serve /metrics on host:port and call every run each `interval` seconds until `stop` is set."""
    server, thread = start_http_server(port, addr=host, registry=metrics.registry)
    log.info("serving http://%s:%d/metrics", host, server.server_address[1])
    try:
        while not stop.is_set():
            began = time.monotonic()
            for run in runs:
                if stop.is_set():
                    break
                run(metrics)
            stop.wait(max(0.0, interval - (time.monotonic() - began)))
    finally:
        server.shutdown()
        thread.join(5)


def guarded(tenant: str, flow: str, once: Callable[[ProbeMetrics], None]) -> Callable[[ProbeMetrics], None]:
    """A run whose failure is counted and logged (one line, no traceback), never the end of the loop."""
    def run(metrics: ProbeMetrics) -> None:
        try:
            once(metrics)
        except MM2GovError as exc:
            log.error("probe of %s: %s", flow, exc)
            metrics.failed(tenant, flow, time.time())
    return run
