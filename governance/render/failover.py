"""`mm2gov failover` output: a table per (group, partition) with a one-line verdict, or one JSON document
(schema `mm2gov.failover/v1`, documented in docs/failover.md)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from governance.failover.assess import PartitionReport, Thresholds, Verdict
    from governance.model.tenancy import Flow

SCHEMA = "mm2gov.failover/v1"
HEADER = ("GROUP", "PARTITION", "SOURCE committed/end", "CHECKPOINT up->down age", "TARGET committed/end",
          "RESUME", "NOT-REPL", "SKIPPED", "RE-READ", "")


def record(report: PartitionReport) -> dict[str, Any]:
    facts, checkpoint, sync = report.facts, report.facts.checkpoint, report.facts.sync
    return {
        "group": facts.group, "topic": facts.topic, "partition": facts.partition,
        "remote_topic": facts.remote_topic,
        "source": {"committed": facts.source_committed, "log_start": facts.source_log_start,
                   "log_end": facts.source_log_end, "members": facts.source_members},
        "checkpoint": None if checkpoint is None else {
            "upstream": checkpoint.upstream, "downstream": checkpoint.downstream,
            "age_seconds": None if report.checkpoint_age is None else round(report.checkpoint_age, 1)},
        "offset_sync": None if sync is None else {"upstream": sync.upstream, "downstream": sync.downstream},
        "target": {"committed": facts.target_committed, "log_end": facts.target_log_end},
        "resume": {"offset": report.resume_offset, "from": report.resume_from},
        "replicated": report.replicated, "not_replicated": report.not_replicated, "skipped": report.skipped,
        "loss": report.loss, "reread": report.reread,
        "ok": report.ok, "problems": list(report.problems), "notes": list(report.notes),
    }


def as_json(tenant: str, flow: Flow, reports: list[PartitionReport], result: Verdict, limits: Thresholds) -> str:
    document = {
        "schema": SCHEMA, "tenant": tenant, "flow": flow.id, "from": flow.source, "to": flow.target,
        "delivery": flow.delivery,
        "ok": result.ok, "verdict": result.reason,
        "thresholds": {"max_loss": limits.max_loss, "max_reread": limits.max_reread,
                       "max_checkpoint_age_seconds": limits.max_checkpoint_age},
        "partitions": [record(r) for r in reports],
    }
    return json.dumps(document, indent=2) + "\n"


def text(tenant: str, flow: Flow, reports: list[PartitionReport], result: Verdict, limits: Thresholds) -> str:
    lines = [f"failover of tenant {tenant}: {flow.source} -> {flow.target} (flow {flow.id}); limits: "
             f"loss {limits.max_loss}, re-read {limits.max_reread}, checkpoint age {limits.max_checkpoint_age:g}s"]
    if flow.exactly_once:
        lines.append("exactly-once flow: start the consumers on the target with isolation.level=read_committed")
    lines.append("")
    rows = [HEADER, *(_row(r) for r in reports)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
              for row in rows]
    details = [f"  {r.facts.group} {r.facts.topic}[{r.facts.partition}]: {message}"
               for r in reports for message in (*r.problems, *r.notes)]
    if details:
        lines += ["", *details]
    lines += ["", ("OK: " if result.ok else "FAIL: ") + result.reason]
    return "\n".join(lines) + "\n"


def _row(report: PartitionReport) -> tuple[str, ...]:
    facts, checkpoint = report.facts, report.facts.checkpoint
    shown = "-" if checkpoint is None else (
        f"{checkpoint.upstream}->{checkpoint.downstream} {report.checkpoint_age or 0:.0f}s")
    target = "-" if facts.target_committed is None else str(facts.target_committed)
    resume = "none" if report.resume_offset is None else f"{report.resume_offset} ({report.resume_from})"
    return (facts.group, f"{facts.topic}[{facts.partition}]", f"{facts.source_committed}/{facts.source_log_end}",
            shown, f"{target}/{facts.target_log_end}", resume, str(report.not_replicated), str(report.skipped),
            "-" if report.reread is None else str(report.reread), "ok" if report.ok else "FAIL")
