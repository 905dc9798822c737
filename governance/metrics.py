"""The metrics registry mm2gov's servers expose (`probe --serve`, the admission webhook)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import Metric


class SnapshotRegistry(CollectorRegistry):
    """A registry a scrape reads as one snapshot: `lock` held by whoever updates several metrics at once.
    The HTTP server collects in another thread, metric by metric; without it a scrape could show an event's
    counter and not yet its histogram (a probe's runs_total counting a run its latency histogram lacks)."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()

    def collect(self) -> Iterator[Metric]:
        with self.lock:
            metrics = list(super().collect())
        yield from metrics
