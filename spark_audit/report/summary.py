"""The run in numbers: counts per severity, tenant and check, the status, and the tenant x tenant
access matrix. Both are part of audit.json and drawn by the HTML page."""

from __future__ import annotations

from collections import Counter
from typing import Any

from governance.policy.engine import severity_rank
from spark_audit.evidence import reach_of, reach_unknown_of
from spark_audit.report.audit_run import AuditRun, checks_of, finding, severity_order, sorted_findings, tenant_order


def summary(run: AuditRun) -> dict[str, Any]:
    """Counts per severity, per tenant x severity and per check, and the run's status.

    `clean` is true only when no finding is above info AND the snapshot is complete.
    `status` is "partial" for a partial snapshot (whatever the findings), else
    "findings" when some finding is above info, else "clean". Tenant "" holds the
    findings that belong to no tenant (e.g. unowned topics, stale principals).
    """
    findings = sorted_findings(run)
    severities = severity_order(f["severity"] for f in findings)
    by_severity = Counter(f["severity"] for f in findings)
    by_tenant: dict[str, dict[str, int]] = {
        t: dict.fromkeys(severities, 0) for t in tenant_order([*run.tenants, *(f["tenant"] for f in findings)])}
    for f in findings:
        by_tenant[f["tenant"]][f["severity"]] += 1
    by_check = {cid: 0 for cid in checks_of(run, findings)}
    for f in findings:
        by_check[f["check_id"]] += 1
    above_info = sum(1 for f in findings if severity_rank(f["severity"]) > 0)
    highest = max((f["severity"] for f in findings), key=severity_rank, default=None)
    status = "partial" if run.is_partial else "findings" if above_info else "clean"
    return {
        "status": status,
        "clean": status == "clean",
        "partial": list(run.partial),
        "problems": list(run.problems),
        "total": len(findings),
        "above_info": above_info,
        "highest": highest,
        "by_severity": {s: by_severity.get(s, 0) for s in severities},
        "by_tenant": by_tenant,
        "by_check": by_check,
    }


def access_matrix(run: AuditRun) -> dict[str, Any]:
    """Tenant x tenant counts of findings that show one tenant reaching another's data.

    Read from the evidence contract (spark_audit.evidence): a finding whose evidence
    `reach` holds {"accessor_tenant": A, "owner_tenant": B} is counted once in
    `counts[A][B]` (rows: the tenant whose principal, group or topic reaches; columns:
    the tenant whose data is reached); a finding reaching several tenants counts in
    each of their cells. Row "*" is `User:*` (every principal), row "" a principal no
    tenant declares. Findings without `reach` pairs are not in the matrix; those whose
    reach cannot be attributed to tenants (`reach_unknown`) are counted per check in
    `unattributed`.

    Returns {"tenants": [...], "counts": {A: {B: n}} (full square, zeros included),
    "checks": {A: {B: {check_id: n}}} (non-zero cells only), "max": n (largest cell),
    "total": n (sum of the cells), "findings": n (findings in at least one cell),
    "unattributed": {check_id: n}}. Rows and columns share the same order: the run's
    tenants and any tenant seen in the matrix, alphabetically, then "*", then "".
    """
    cells: Counter[tuple[str, str]] = Counter()
    per_check: dict[tuple[str, str], Counter[str]] = {}
    unattributed: Counter[str] = Counter()
    in_matrix = 0
    for f in map(finding, run.findings):
        pairs = reach_of(f["evidence"])
        if reach_unknown_of(f["evidence"]) is not None:
            unattributed[f["check_id"]] += 1
        in_matrix += bool(pairs)
        for key in pairs:
            cells[key] += 1
            per_check.setdefault(key, Counter())[f["check_id"]] += 1
    tenants = tenant_order([*run.tenants, *(a for a, _ in cells), *(b for _, b in cells)])
    return {
        "tenants": tenants,
        "counts": {a: {b: cells.get((a, b), 0) for b in tenants} for a in tenants},
        "checks": {a: {b: dict(sorted(per_check[(a, b)].items())) for b in tenants if (a, b) in per_check}
                   for a in tenants if any((a, b) in per_check for b in tenants)},
        "max": max(cells.values(), default=0),
        "total": sum(cells.values()),
        "findings": in_matrix,
        "unattributed": dict(sorted(unattributed.items())),
    }
