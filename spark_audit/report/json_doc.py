"""audit.json: the run's metadata, its summary, the access matrix, replication per flow and every finding
(CONTRACT.md)."""

from __future__ import annotations

from typing import Any

from spark_audit.report.audit_run import TOOL, AuditRun, sorted_findings
from spark_audit.report.replication import replication_summary
from spark_audit.report.summary import access_matrix, summary


def run_metadata(run: AuditRun) -> dict[str, Any]:
    return {"run_id": run.run_id, "started": run.started, "repo": run.repo, "clusters": list(run.clusters),
            "tenants": list(run.tenants), "partial": list(run.partial), "problems": list(run.problems),
            "records_scanned": run.records_scanned, "seconds": round(float(run.seconds), 3),
            "tool": {"name": TOOL["name"], "version": TOOL["version"]}}


def json_document(run: AuditRun) -> dict[str, Any]:
    """{"run": metadata, "summary": summary(run), "access_matrix": ..., "replication": [per flow],
    "findings": [...]}; findings sorted by severity (worst first), check, tenant, cluster, resource."""
    return {"run": run_metadata(run), "summary": summary(run), "access_matrix": access_matrix(run),
            "replication": replication_summary(run), "findings": sorted_findings(run)}
