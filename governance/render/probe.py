"""`mm2gov probe` output: one line per flow with its figures and verdict, the SLO misses under it; or one
JSON document (schema `mm2gov.probe/v1`, documented in docs/probe.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from governance.probe.assess import ProbeResult
from governance.probe.live import ProbeFlow

SCHEMA = "mm2gov.probe/v1"
LOST_SHOWN = 10  # lost (partition, seq) pairs listed per flow; the count is always whole


@dataclass(frozen=True)
class FlowOutcome:
    flow: ProbeFlow
    result: ProbeResult
    misses: list[str]


def record(outcome: FlowOutcome) -> dict[str, Any]:
    flow, result, slo = outcome.flow, outcome.result, outcome.flow.slo
    latency = result.latency
    return {
        "flow": flow.flow, "source": flow.source, "target": flow.target, "topic": flow.topic,
        "remote_topic": flow.remote_topic, "run": result.run,
        "slo": {"latency_p99_ms": slo.latency_p99_ms, "max_lost": slo.max_lost,
                "max_duplicated": slo.max_duplicated, "max_reordered": slo.max_reordered, "affinity": slo.affinity},
        "sent": result.sent, "delivered": result.delivered, "lost": len(result.lost),
        "lost_canaries": [{"partition": p, "seq": s} for p, s in result.lost],
        "duplicated": result.duplicated, "reordered": result.reordered, "misplaced": result.misplaced,
        "foreign": result.foreign, "unacknowledged": result.unacknowledged,
        "latency_ms": None if latency is None else {"p50": latency.p50_ms, "p99": latency.p99_ms,
                                                    "max": latency.max_ms},
        "ok": not outcome.misses, "misses": outcome.misses,
    }


def as_json(tenant: str, outcomes: list[FlowOutcome]) -> str:
    document = {"schema": SCHEMA, "tenant": tenant, "ok": all(not o.misses for o in outcomes),
                "flows": [record(o) for o in outcomes]}
    return json.dumps(document, indent=2) + "\n"


def text(tenant: str, outcomes: list[FlowOutcome]) -> str:
    lines = []
    for outcome in outcomes:
        flow, result = outcome.flow, outcome.result
        latency = ("no latency (nothing arrived)" if result.latency is None else
                   f"latency p50 {result.latency.p50_ms} ms, p99 {result.latency.p99_ms} ms, "
                   f"max {result.latency.max_ms} ms")
        verdict = "OK" if not outcome.misses else "SLO MISSED"
        lines.append(f"{verdict}  {tenant} {flow.source} -> {flow.target} (flow {flow.flow}, run {result.run}): "
                     f"{result.delivered}/{result.sent} canaries arrived, {latency}; lost {len(result.lost)}, "
                     f"duplicated {result.duplicated}, reordered {result.reordered}, misplaced {result.misplaced}, "
                     f"foreign {result.foreign}")
        lines += [f"  - {miss}" for miss in outcome.misses]
        if result.lost:
            shown = ", ".join(f"{flow.topic}[{p}] #{s}" for p, s in result.lost[:LOST_SHOWN])
            more = f" and {len(result.lost) - LOST_SHOWN} more" if len(result.lost) > LOST_SHOWN else ""
            lines.append(f"  lost: {shown}{more}")
    return "\n".join(lines) + "\n"
