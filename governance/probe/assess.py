"""What one probe run's canaries say about a flow (pure): end-to-end latency, loss, duplicates,
reordering and partition affinity, and which of the tenant's SLOs they miss.

- sent: the canaries the source acknowledged (a send that failed is not expected back);
- a canary is *lost* when it was sent and never read back on the target within the run's wait;
- every copy after the first is a *duplicate* (MM2 at-least-once after a crash, or a replayed batch);
- *reordered*: in a target partition, in offset order, a first copy whose sequence number is below one
  already seen from the same source partition (MM2 keeps a partition's order; a reset or a second writer
  does not);
- *misplaced*: a copy in another target partition than the source partition it was written to (MM2's
  DefaultReplicationPolicy keeps partition numbers, so keyed consumers keep their affinity);
- latency: the first copy's read time minus its send time, on the probe's one clock (so no clock skew);
- records that are not this run's canaries are counted apart (`foreign`) and judged no further, and this
  run's canaries the probe never had acknowledged are `unacknowledged`: neither lost nor duplicated.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from governance.model.tenancy import Slo  # a flow's SLO, declared once (the schema's and the decision's)
from governance.probe.canary import Canary, Received, decode


@dataclass(frozen=True)
class Latency:
    p50_ms: int
    p99_ms: int
    max_ms: int


@dataclass(frozen=True)
class ProbeResult:
    run: str
    sent: int
    delivered: int  # distinct sent canaries read back
    lost: tuple[tuple[int, int], ...]  # (source partition, seq) never read back
    duplicated: int  # copies beyond the first
    reordered: int
    misplaced: int
    foreign: int
    unacknowledged: int
    latency: Latency | None  # None when nothing was delivered
    latencies_ms: tuple[int, ...] = ()  # every delivered canary's, for histograms (probe --serve)


def percentile(values: Sequence[int], fraction: float) -> int:
    """Nearest-rank percentile: the smallest value at least `fraction` of the values are not above."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def assess(run: str, sent: Sequence[Canary], received: Sequence[Received]) -> ProbeResult:
    expected = {(c.partition, c.seq): c for c in sent if c.run == run}
    copies: Counter[tuple[int, int]] = Counter()
    first_ms: dict[tuple[int, int], int] = {}
    highest: dict[tuple[int, int], int] = {}  # (target partition, source partition) -> highest seq seen first
    foreign = unacknowledged = reordered = misplaced = 0
    for record in sorted(received, key=lambda r: (r.partition, r.offset)):
        canary = decode(record.value)
        if canary is None or canary.run != run:
            foreign += 1
            continue
        key = (canary.partition, canary.seq)
        if key not in expected:
            unacknowledged += 1
            continue
        copies[key] += 1
        if record.partition != canary.partition:
            misplaced += 1
        if copies[key] > 1:
            continue
        first_ms[key] = record.received_ms
        lane = (record.partition, canary.partition)
        if canary.seq < highest.get(lane, -1):
            reordered += 1
        highest[lane] = max(highest.get(lane, -1), canary.seq)
    latencies = [max(0, first_ms[key] - canary.sent_ms) for key, canary in expected.items() if key in first_ms]
    latency = (Latency(percentile(latencies, 0.50), percentile(latencies, 0.99), max(latencies))
               if latencies else None)
    return ProbeResult(
        run=run, sent=len(expected), delivered=len(first_ms),
        lost=tuple(sorted(key for key in expected if key not in first_ms)),
        duplicated=sum(count - 1 for count in copies.values()), reordered=reordered, misplaced=misplaced,
        foreign=foreign, unacknowledged=unacknowledged, latency=latency, latencies_ms=tuple(latencies))


def misses(result: ProbeResult, slo: Slo) -> list[str]:
    """The SLO lines this run misses, one sentence each (empty: the run met the SLO)."""
    found = []
    if result.sent == 0:
        found.append("no canary was acknowledged by the source: nothing was measured")
    if len(result.lost) > slo.max_lost:
        found.append(f"{len(result.lost)} of {result.sent} canaries lost (SLO: at most {slo.max_lost})")
    if result.duplicated > slo.max_duplicated:
        found.append(f"{result.duplicated} duplicate copies (SLO: at most {slo.max_duplicated})")
    if result.reordered > slo.max_reordered:
        found.append(f"{result.reordered} canaries out of order (SLO: at most {slo.max_reordered})")
    if slo.affinity and result.misplaced:
        found.append(f"{result.misplaced} copies in another partition than their source partition")
    if result.latency and result.latency.p99_ms > slo.latency_p99_ms:
        found.append(f"end-to-end latency p99 {result.latency.p99_ms} ms over the SLO's {slo.latency_p99_ms} ms")
    return found
