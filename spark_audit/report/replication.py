"""Replication per flow: what REPLICATION_GAP measured for each flow with a gap, as rates.

The detector puts its flow's totals on every finding of the flow (evidence `flow`: source records
scanned inside the partitions' windows, missing, duplicated, their rates, partitions scanned),
so the report needs no Spark and no second pass: one row per flow, read off any of its findings.
audit.json and audit.sarif carry the rows (`replication`); the HTML page draws them as a table.
A flow without a gap in the scanned windows has no finding, hence no row.
"""

from __future__ import annotations

from typing import Any

from governance.policy.engine import severity_rank
from spark_audit.report.audit_run import AuditRun, sorted_findings

CHECK_ID = "REPLICATION_GAP"
FLOW = "flow"  # the evidence key REPLICATION_GAP writes its flow's totals under
TOTALS = ("source_records", "missing", "duplicated", "missing_rate", "duplicated_rate", "partitions")


def replication_summary(run: AuditRun) -> list[dict[str, Any]]:
    """One row per flow with a REPLICATION_GAP finding, worst first (missing rate, then duplicated
    rate): flow_id, tenant, target, the flow's totals (TOTALS), how many partitions have a gap and the
    worst severity among them. Findings without `flow` totals (an older detector's) are left out."""
    rows: dict[str, dict[str, Any]] = {}
    for f in sorted_findings(run):
        totals = f["evidence"].get(FLOW) if f["check_id"] == CHECK_ID else None
        flow_id = f["evidence"].get("flow_id")
        if not isinstance(totals, dict) or not flow_id:
            continue
        row = rows.setdefault(flow_id, {"flow_id": flow_id, "tenant": f["tenant"], "target": f["cluster"],
                                        **{key: totals.get(key, 0) for key in TOTALS},
                                        "partitions_with_gap": 0, "severity": f["severity"]})
        row["partitions_with_gap"] += 1
        row["severity"] = max(row["severity"], f["severity"], key=severity_rank)
    return sorted(rows.values(), key=lambda r: (-float(r["missing_rate"]), -float(r["duplicated_rate"]),
                                                r["flow_id"]))
