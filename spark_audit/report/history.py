"""The audit's memory: one flat row per run (kept as Parquet under OUT/history/ by the job) and the
trend over those rows that the HTML page charts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from spark_audit.report.audit_run import SEVERITIES_DESC, AuditRun
from spark_audit.report.summary import summary


def history_row(run: AuditRun) -> dict[str, Any]:
    """The run as one flat history row (a Parquet-friendly record):
    run_id, started, status (str); critical, high, medium, low, info, total (int)."""
    s = summary(run)
    counts = {sev: s["by_severity"].get(sev, 0) for sev in SEVERITIES_DESC}
    return {"run_id": run.run_id, "started": run.started, "status": s["status"], **counts, "total": s["total"]}


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def trend(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """History rows (oldest first, the current run included) as trend points, oldest first.

    Rows are ordered by (started, run_id); a run_id seen twice keeps its last row.
    Each point has the row's keys plus `delta`: total minus the previous run's
    total (None for the first run).
    """
    latest: dict[str, dict[str, Any]] = {}
    for row in history:
        latest[str(row.get("run_id") or "")] = dict(row)
    points: list[dict[str, Any]] = []
    for row in sorted(latest.values(), key=lambda r: (str(r.get("started") or ""), str(r.get("run_id") or ""))):
        counts = {sev: _int(row.get(sev)) for sev in SEVERITIES_DESC}
        total = _int(row.get("total")) or sum(counts.values())
        points.append({"run_id": str(row.get("run_id") or ""), "started": str(row.get("started") or ""),
                       "status": str(row.get("status") or ""), **counts, "total": total,
                       "delta": total - points[-1]["total"] if points else None})
    return points


def with_current(run: AuditRun, history: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trend of `history` with `run` as its latest row (replacing a row of the same run_id)."""
    rows = [r for r in history if str(r.get("run_id")) != run.run_id]
    return trend([*rows, history_row(run)])
