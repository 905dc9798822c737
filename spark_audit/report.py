"""The audit's reports: JSON (CONTRACT.md findings), SARIF 2.1.0 and one self-contained HTML file.

Pure functions over an `AuditRun` (plain Python values, no Spark): the CLI
collects the findings DataFrame into dicts, reads the history rows it keeps as
Parquet under OUT/history/, and calls `write_reports`.

A partially collected snapshot is never "clean": `summary` reports status
"partial" whenever `partial` or `problems` is non-empty, whatever the findings,
the SARIF invocation is marked unsuccessful and the HTML banner says so.

Everything that comes from the clusters or the governance repo (names,
messages, evidence) is escaped in the HTML; the page carries a
Content-Security-Policy that forbids scripts and any external load.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from governance import __version__
from governance.policy.engine import SEVERITIES, severity_rank
from governance.render.violations import SARIF_LEVEL
from spark_audit.evidence import EVERY_PRINCIPAL, REACH, UNDECLARED, reach_of, reach_unknown_of

FINDING_KEYS = ("check_id", "severity", "tenant", "cluster", "resource_type", "resource_name", "principal",
                "message", "remediation", "evidence")
SEVERITIES_DESC = tuple(reversed(SEVERITIES))  # critical first
FORMATS = {"json": "audit.json", "sarif": "audit.sarif", "html": "report.html"}
SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0", "info": "0.0"}
TOOL = {"name": "mm2gov", "version": __version__, "informationUri": "https://github.com/mm2gov/mm2gov"}
NO_TENANT = "(no tenant)"
EVERYONE = "every principal (User:*)"


@dataclass(frozen=True)
class AuditRun:
    """One audit: what was looked at, what went wrong while collecting, and the findings.

    `findings` are CONTRACT.md Finding dicts; `evidence` may be a dict or the JSON
    string the Spark detectors produce. `checks` maps check id to its catalog entry
    (a dict with title/severity/rationale/remediation/catches, or a `CheckMeta`).
    `partial` names what could not be collected ("cloud", "onprem:acls"), `problems`
    says why, one human line each.
    """

    run_id: str
    started: str
    repo: str
    clusters: list[str]
    partial: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    tenants: list[str] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    checks: dict[str, Any] = field(default_factory=dict)
    records_scanned: int = 0
    seconds: float = 0.0

    @property
    def is_partial(self) -> bool:
        """Fail safe: any collection problem makes the snapshot partial."""
        return bool(self.partial or self.problems)


# --- normalisation ---------------------------------------------------------------------------

def _evidence(value: Any) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {"raw": value}
    if isinstance(value, Mapping):
        return dict(value)
    return {"value": value}


def finding(record: Mapping[str, Any]) -> dict[str, Any]:
    """A Finding with every CONTRACT.md key: strings ("" when absent), evidence a dict."""
    out: dict[str, Any] = {}
    for key in FINDING_KEYS:
        value = record.get(key)
        out[key] = _evidence(value) if key == "evidence" else ("" if value is None else str(value))
    out["severity"] = out["severity"].strip().lower()
    return out


def check_entry(check_id: str, entry: Any) -> dict[str, Any]:
    """A catalog entry as a dict (accepts `CheckMeta` or a dict); missing keys are empty."""
    if dataclasses.is_dataclass(entry) and not isinstance(entry, type):
        entry = dataclasses.asdict(entry)
    entry = dict(entry or {})
    return {"id": str(entry.get("id") or check_id), "title": str(entry.get("title") or check_id),
            "severity": str(entry.get("severity") or ""), "rationale": str(entry.get("rationale") or ""),
            "remediation": str(entry.get("remediation") or ""), "catches": [str(c) for c in entry.get("catches") or ()]}


def _findings(run: AuditRun) -> list[dict[str, Any]]:
    return sorted((finding(f) for f in run.findings), key=_sort_key)


def _sort_key(f: Mapping[str, Any]) -> tuple[Any, ...]:
    return (-severity_rank(f["severity"]), f["check_id"], f["tenant"], f["cluster"], f["resource_type"],
            f["resource_name"], f["principal"], f["message"])


def _checks(run: AuditRun, findings: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The catalog entries, plus a bare entry for any check id only seen in findings; sorted by id."""
    entries = {cid: check_entry(cid, e) for cid, e in run.checks.items()}
    for f in findings:
        if f["check_id"] not in entries:
            entries[f["check_id"]] = check_entry(f["check_id"], {"severity": f["severity"]})
    return dict(sorted(entries.items()))


def _severity_order(severities: Iterable[str]) -> list[str]:
    """Known severities critical..info, then any unknown ones (which rank worst) first."""
    unknown = sorted(set(severities) - set(SEVERITIES))
    return [*unknown, *SEVERITIES_DESC]


def _tenant_sort(tenants: Iterable[str]) -> list[str]:
    """Alphabetically, then "*" (every principal), then "" (no tenant)."""
    return sorted(set(tenants), key=lambda t: (t == UNDECLARED, t == EVERY_PRINCIPAL, t))


# --- summary, matrix, history ------------------------------------------------------------------

def summary(run: AuditRun) -> dict[str, Any]:
    """Counts per severity, per tenant x severity and per check, and the run's status.

    `clean` is true only when no finding is above info AND the snapshot is complete.
    `status` is "partial" for a partial snapshot (whatever the findings), else
    "findings" when some finding is above info, else "clean". Tenant "" holds the
    findings that belong to no tenant (e.g. unowned topics, stale principals).
    """
    findings = _findings(run)
    severities = _severity_order(f["severity"] for f in findings)
    by_severity = Counter(f["severity"] for f in findings)
    by_tenant: dict[str, dict[str, int]] = {
        t: dict.fromkeys(severities, 0) for t in _tenant_sort([*run.tenants, *(f["tenant"] for f in findings)])}
    for f in findings:
        by_tenant[f["tenant"]][f["severity"]] += 1
    by_check = {cid: 0 for cid in _checks(run, findings)}
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
    tenants = _tenant_sort([*run.tenants, *(a for a, _ in cells), *(b for _, b in cells)])
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


def _with_current(run: AuditRun, history: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = [r for r in history if str(r.get("run_id")) != run.run_id]
    return trend([*rows, history_row(run)])


# --- JSON and SARIF ------------------------------------------------------------------------------

def run_metadata(run: AuditRun) -> dict[str, Any]:
    return {"run_id": run.run_id, "started": run.started, "repo": run.repo, "clusters": list(run.clusters),
            "tenants": list(run.tenants), "partial": list(run.partial), "problems": list(run.problems),
            "records_scanned": run.records_scanned, "seconds": round(float(run.seconds), 3),
            "tool": {"name": TOOL["name"], "version": TOOL["version"]}}


def json_document(run: AuditRun) -> dict[str, Any]:
    """{"run": metadata, "summary": summary(run), "access_matrix": ..., "findings": [...]};
    findings sorted by severity (worst first), check, tenant, cluster, resource."""
    return {"run": run_metadata(run), "summary": summary(run), "access_matrix": access_matrix(run),
            "findings": _findings(run)}


def rule_name(check_id: str) -> str:
    """ACL_CROSS_TENANT -> AclCrossTenant (SARIF's reportingDescriptor.name)."""
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", check_id) if part)


def fully_qualified_name(f: Mapping[str, Any]) -> str:
    return f"{f['cluster']}/{f['resource_type']}/{f['resource_name']}"


def _fingerprint(f: Mapping[str, Any]) -> str:
    key = "\x1f".join(str(f[k]) for k in ("check_id", "tenant", "cluster", "resource_type", "resource_name",
                                           "principal"))
    return hashlib.sha256(key.encode()).hexdigest()


def sarif_document(run: AuditRun) -> dict[str, Any]:
    """SARIF 2.1.0: one rule per check of the catalog (and per unknown check id seen), one result
    per finding located by a logical location `cluster/resource_type/resource_name`. A partial run's
    invocation has executionSuccessful false and one toolExecutionNotification per problem."""
    findings = _findings(run)
    checks = _checks(run, findings)
    index = {cid: i for i, cid in enumerate(checks)}
    rules = []
    for cid, c in checks.items():
        rule: dict[str, Any] = {
            "id": cid, "name": rule_name(cid),
            "shortDescription": {"text": c["title"]},
            "fullDescription": {"text": c["rationale"] or c["title"]},
            "help": {"text": c["remediation"] or c["title"]},
            "defaultConfiguration": {"level": SARIF_LEVEL.get(c["severity"], "error")},
            "properties": {"severity": c["severity"], "tags": ["security", "kafka", "mirrormaker2", "tenancy"],
                           "catches": c["catches"]},
        }
        if c["severity"] in SECURITY_SEVERITY:
            rule["properties"]["security-severity"] = SECURITY_SEVERITY[c["severity"]]
        rules.append(rule)
    results = []
    for f in findings:
        results.append({
            "ruleId": f["check_id"], "ruleIndex": index[f["check_id"]],
            "level": SARIF_LEVEL.get(f["severity"], "error"),
            "message": {"text": f["message"] or checks[f["check_id"]]["title"]},
            "locations": [{"logicalLocations": [{"fullyQualifiedName": fully_qualified_name(f),
                                                 "name": f["resource_name"], "kind": "resource"}]}],
            "partialFingerprints": {"mm2gov/finding/v1": _fingerprint(f)},
            "properties": {"severity": f["severity"], "tenant": f["tenant"], "principal": f["principal"],
                           "cluster": f["cluster"], "remediation": f["remediation"], "evidence": f["evidence"]},
        })
    notifications = [{"level": "error", "descriptor": {"id": "PARTIAL_SNAPSHOT"}, "message": {"text": problem}}
                     for problem in run.problems]
    if run.partial and not run.problems:
        notifications = [{"level": "error", "descriptor": {"id": "PARTIAL_SNAPSHOT"},
                          "message": {"text": f"not collected: {scope}"}} for scope in run.partial]
    invocation: dict[str, Any] = {"executionSuccessful": not run.is_partial,
                                  "properties": {"partial": list(run.partial)}}
    if run.started:
        invocation["startTimeUtc"] = run.started
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    s = summary(run)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {**TOOL, "rules": rules}},
            "automationDetails": {"id": f"mm2gov-audit/{run.run_id}"},
            "invocations": [invocation],
            "results": results,
            "properties": {"run_id": run.run_id, "repo": run.repo, "clusters": list(run.clusters),
                           "status": s["status"], "by_severity": s["by_severity"]},
        }],
    }


# --- HTML ------------------------------------------------------------------------------------------

def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _anchor(prefix: str, value: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_-]+", "-", value)


def _tenant_label(tenant: str) -> str:
    return EVERYONE if tenant == EVERY_PRINCIPAL else tenant or NO_TENANT


def _badge(severity: str) -> str:
    cls = severity if severity in SEVERITIES else "unknown"
    return f'<span class="badge sev-{cls}">{_e(severity or "?")}</span>'


def _status_pill(status: str) -> str:
    cls = status if status in ("clean", "findings", "partial") else "partial"
    return f'<span class="pill st-{cls}">{_e(status or "unknown")}</span>'


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


CSS = """
:root{--ink:#1c2430;--muted:#5b6675;--line:#d9dee5;--bg:#f6f7f9;--card:#fff;
--critical:#a61b29;--high:#d9480f;--medium:#e0a000;--low:#2f6fbf;--info:#7a8591;--unknown:#5a189a}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Liberation Sans","DejaVu Sans",
sans-serif}
main{max-width:1240px;margin:0 auto;padding:28px 32px 48px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono","DejaVu Sans Mono",monospace;
font-size:.86em}
h1{font-size:26px;margin:0 0 4px;letter-spacing:-.01em}
h2{font-size:19px;margin:0 0 12px;padding-bottom:6px;border-bottom:2px solid var(--ink)}
h3{font-size:17px;margin:26px 0 10px;display:flex;align-items:center;gap:10px}
h4{font-size:15px;margin:18px 0 6px}
a{color:#1f5fae}
.eyebrow{text-transform:uppercase;letter-spacing:.08em;font-size:12px;color:var(--muted);font-weight:600}
.masthead{background:#1c2430;color:#fff;border-radius:8px;padding:20px 26px;margin-bottom:16px;display:flex;
justify-content:space-between;gap:28px;align-items:center;flex-wrap:wrap}
.masthead .eyebrow{color:#9fb0c3}.masthead h1{color:#fff}.masthead .runid{color:#cfd8e3;font-size:14px}
.meta{display:grid;grid-template-columns:max-content minmax(0,auto) max-content minmax(0,auto);gap:3px 14px;margin:0;
font-size:13px}
.meta dt{color:#9fb0c3}.meta dd{margin:0;overflow-wrap:anywhere;color:#fff}
.pill{display:inline-block;padding:0 8px;border-radius:9px;font-size:12px;font-weight:700;border:1px solid}
.st-clean{background:#e6f6ea;color:#0f4d22;border-color:#1a7f37}
.st-findings{background:#fff5d9;color:#5c3d00;border-color:#c98a00}
.st-partial{background:#ffe1e1;color:#8a1010;border-color:#b71c1c}
.chips{display:flex;flex-wrap:wrap;gap:4px 6px}
.chip{display:inline-block;background:#fff;border:1px solid #dde2e8;border-radius:4px;padding:0 6px;font-size:12.5px}
.chip b{font-weight:600;color:#5b6675;margin-right:4px}
.banner{border-radius:8px;padding:16px 20px;margin:0 0 18px;border:1px solid;border-left-width:10px}
.banner .title{font-size:20px;font-weight:800;letter-spacing:.01em}
.banner p{margin:6px 0 0}.banner ul{margin:8px 0 0;padding-left:22px}
.status-clean{background:#e6f6ea;border-color:#1a7f37;color:#0f4d22}
.status-findings{background:#fff5d9;border-color:#c98a00;color:#5c3d00}
.status-partial{border-color:#b71c1c;color:#6d0b0b;
background:repeating-linear-gradient(135deg,#ffe5e5 0 16px,#ffd2d2 16px 32px)}
.cards{display:grid;grid-template-columns:repeat(6,1fr);gap:12px;margin-bottom:18px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 14px;border-top:5px solid}
.card .n{font-size:28px;font-weight:800;line-height:1.1}.card .l{font-size:12px;color:var(--muted);
text-transform:uppercase;letter-spacing:.06em;font-weight:600}
.card.total{border-top-color:var(--ink)}
nav.toc{font-size:13px;margin:0 0 22px;display:flex;gap:18px;flex-wrap:wrap}
section.block{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:18px 22px;margin:0 0 20px}
.note{color:var(--muted);font-size:13px;margin:4px 0 12px}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
thead th{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);
border-bottom:2px solid var(--line)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.zero{color:#b8bfc9}
tr.dim td{color:#8a94a2}
.scroll{overflow-x:auto}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:700;color:#fff;
text-transform:uppercase;letter-spacing:.04em;vertical-align:middle;white-space:nowrap}
.sev-critical{background:var(--critical)}.sev-high{background:var(--high)}.sev-medium{background:var(--medium);color:#2b2100}
.sev-low{background:var(--low)}.sev-info{background:var(--info)}.sev-unknown{background:var(--unknown)}
.card.sev-critical,.card.sev-high,.card.sev-medium,.card.sev-low,.card.sev-info,.card.sev-unknown{background:var(--card);color:var(--ink)}
.card.sev-critical{border-top-color:var(--critical)}.card.sev-high{border-top-color:var(--high)}
.card.sev-medium{border-top-color:var(--medium)}.card.sev-low{border-top-color:var(--low)}
.card.sev-info{border-top-color:var(--info)}.card.sev-unknown{border-top-color:var(--unknown)}
td.hit-critical{background:#f8dde0;font-weight:700;color:var(--critical)}td.hit-high{background:#fde6d8;font-weight:700;color:#a3380a}
td.hit-medium{background:#fdf1cc;font-weight:700;color:#6e4f00}td.hit-low{background:#e0ebf8;font-weight:700;color:#1f4f8f}
td.hit-info{background:#eef0f3;color:#4a5360}td.hit-unknown{background:#ece0f7;font-weight:700}
.heat{width:auto;border-collapse:separate;border-spacing:3px;font-size:13px}
.heat th,.heat td{border:0;padding:0}
.heat thead th{text-transform:none;letter-spacing:0;color:var(--ink);font-weight:600;text-align:center;padding:4px 2px;
white-space:nowrap;vertical-align:bottom;font-size:13px}
.heat.many thead th:not(.corner){writing-mode:vertical-rl;transform:rotate(180deg);text-align:left;padding:6px 0}
.heat tbody th{text-align:right;padding-right:10px;font-weight:600;white-space:nowrap;vertical-align:middle}
.heat td{min-width:88px;height:46px;text-align:center;vertical-align:middle;border-radius:4px;font-weight:700;
font-variant-numeric:tabular-nums;border:1px solid #eceff3}
.heat td.diag{background:repeating-linear-gradient(135deg,#eceff3 0 6px,#dfe3e8 6px 12px);color:#7a8591}
.heat.many td{min-width:46px;height:38px}
.heat .corner{font-size:11px!important;color:var(--muted)!important;font-weight:400!important;text-align:left!important;
white-space:normal!important;max-width:120px}
.legend{display:flex;gap:16px;align-items:center;font-size:12px;color:var(--muted);margin-top:10px;flex-wrap:wrap}
.legend .sw{display:inline-block;width:14px;height:14px;border-radius:3px;vertical-align:-2px;margin-right:5px;
border:1px solid #d0d5dc}
.ramp{display:inline-block;width:140px;height:12px;border-radius:3px;vertical-align:-1px;margin:0 6px;
background:linear-gradient(90deg,#fde0dd,#67000d)}
svg.chart{width:100%;height:auto;display:block}
svg.chart text{font-family:inherit;font-size:11px;fill:#5b6675}
.group{margin-top:6px}
.check-head{border-left:4px solid var(--line);padding:2px 0 2px 12px;margin:18px 0 10px}
.check-head h4{margin:0}.check-head p{margin:2px 0 0;color:var(--muted);font-size:13px}
.finding{border:1px solid var(--line);border-left:6px solid var(--info);border-radius:6px;padding:12px 16px;
margin:0 0 12px;background:#fff;break-inside:avoid;page-break-inside:avoid}
.finding.sev-critical{border-left-color:var(--critical)}.finding.sev-high{border-left-color:var(--high)}
.finding.sev-medium{border-left-color:var(--medium)}.finding.sev-low{border-left-color:var(--low)}
.finding.sev-unknown{border-left-color:var(--unknown)}
.finding .msg{font-weight:600;margin:0 0 8px;font-size:15px}
.finding .fid{color:var(--muted);font-size:12px;font-weight:400;margin-left:6px}
.facts{display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:4px 16px;margin:0 0 10px;font-size:13px}
.facts div{min-width:0}.facts dt{color:var(--muted);font-size:11px;text-transform:uppercase;letter-spacing:.05em}
.facts dd{margin:0;overflow-wrap:anywhere}
.sub{font-size:11px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);font-weight:700;margin:8px 0 4px}
dl.evidence{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:3px 14px;margin:0;font-size:13px;
background:#f7f8fa;border:1px solid #eceff3;border-radius:4px;padding:8px 12px}
dl.evidence dt{font-weight:600;color:#3b4552}dl.evidence dd{margin:0;overflow-wrap:anywhere}
dl.evidence pre{margin:0;white-space:pre-wrap;word-break:break-all}
.remediation{margin:0;font-size:13.5px;background:#eef5ff;border-left:3px solid #1f5fae;padding:6px 12px;
border-radius:3px}
.empty{color:var(--muted);font-style:italic}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:24px}
@media (max-width:900px){.cards{grid-template-columns:repeat(3,1fr)}.facts{grid-template-columns:1fr 1fr}}
@media print{
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{background:#fff;font-size:11pt}main{max-width:none;padding:0}
nav.toc{display:none}a{color:inherit;text-decoration:none}.masthead{border-radius:0}
section.block{border:0;padding:0;margin:0 0 18pt;break-inside:auto}
h2,h3,h4{break-after:avoid;page-break-after:avoid}
.banner,.card,tr,.finding{break-inside:avoid;page-break-inside:avoid}
.scroll{overflow:visible}
}
"""


def _banner(run: AuditRun, s: Mapping[str, Any]) -> str:
    if s["status"] == "partial":
        scopes = ", ".join(run.partial) if run.partial else "see the problems below"
        items = "".join(f"<li>{_e(p)}</li>" for p in run.problems)
        counted = (f"{_plural(s['total'], 'finding')} in what was collected"
                   if s["total"] else "no findings in what was collected, which proves nothing about the rest")
        return ('<section class="banner status-partial" id="status" role="status" data-status="partial">'
                '<div class="title">PARTIAL SNAPSHOT — not a clean bill of health</div>'
                f"<p>The audit could not collect everything (not collected: <strong>{_e(scopes)}</strong>): "
                f"{_e(counted)}. Re-run once the problems are fixed.</p>"
                + (f"<ul>{items}</ul>" if items else "") + "</section>")
    if s["status"] == "findings":
        parts = ", ".join(f"{n} {sev}" for sev, n in s["by_severity"].items() if n)
        return ('<section class="banner status-findings" id="status" role="status" data-status="findings">'
                f'<div class="title">FINDINGS — {_e(_plural(s["above_info"], "finding"))} above info need review</div>'
                f"<p>{_e(parts)}; highest severity <strong>{_e(s['highest'])}</strong>.</p></section>")
    info = f" ({_plural(s['total'], 'informational finding')})" if s["total"] else ""
    return ('<section class="banner status-clean" id="status" role="status" data-status="clean">'
            '<div class="title">CLEAN — no findings above info</div>'
            f"<p>Every check ran on a complete snapshot of {_e(', '.join(run.clusters) or 'no cluster')} "
            f"for {_e(_plural(len(run.tenants), 'tenant'))}{_e(info)}.</p></section>")


def _cards(s: Mapping[str, Any]) -> str:
    cards = [f'<div class="card sev-{sev if sev in SEVERITIES else "unknown"}"><div class="n">{n}</div>'
             f'<div class="l">{_e(sev)}</div></div>' for sev, n in s["by_severity"].items()
             if sev in SEVERITIES or n]
    cards.append(f'<div class="card total"><div class="n">{s["total"]}</div><div class="l">total</div></div>')
    return f'<div class="cards">{"".join(cards)}</div>'


def _tenant_table(s: Mapping[str, Any]) -> str:
    severities = list(s["by_severity"])
    rows = sorted(s["by_tenant"].items(), key=lambda kv: ([-kv[1][sev] for sev in severities], kv[0] == "", kv[0]))
    head = "".join(f'<th class="num">{_e(sev)}</th>' for sev in severities)
    body = []
    for tenant, counts in rows:
        cells = "".join(
            f'<td class="num hit-{sev if sev in SEVERITIES else "unknown"}">{counts[sev]}</td>' if counts[sev]
            else '<td class="num zero">0</td>' for sev in severities)
        total = sum(counts.values())
        label = f"<em>{_e(NO_TENANT)}</em>" if tenant == "" else _e(tenant)
        body.append(f'<tr{"" if total else " class=dim"}><th scope="row">{label}</th>{cells}'
                    f'<td class="num"><strong>{total}</strong></td></tr>')
    totals = "".join(f'<td class="num"><strong>{s["by_severity"][sev]}</strong></td>' for sev in severities)
    return (f'<div class="scroll"><table><thead><tr><th>tenant</th>{head}<th class="num">total</th></tr></thead>'
            f'<tbody>{"".join(body)}</tbody><tfoot><tr><th>all tenants</th>{totals}'
            f'<td class="num"><strong>{s["total"]}</strong></td></tr></tfoot></table></div>')


def _heat_colour(count: int, top: int) -> tuple[str, str]:
    """Background and text colour on a light-to-dark red ramp (square-root scale)."""
    lo, hi = (0xFD, 0xE0, 0xDD), (0x67, 0x00, 0x0D)
    t = math.sqrt(count / top) if top else 0.0
    rgb = tuple(round(a + (b - a) * t) for a, b in zip(lo, hi, strict=True))
    return "#{:02x}{:02x}{:02x}".format(*rgb), "#fff" if t > 0.45 else "#3d0006"


def _matrix(run: AuditRun) -> str:
    m = access_matrix(run)
    tenants = m["tenants"]
    if not tenants:
        return '<p class="empty">No tenants declared.</p>'
    owners = [t for t in tenants if t not in (EVERY_PRINCIPAL, UNDECLARED)]  # whose data: always a tenant
    head = "".join(f'<th scope="col" title="{_e(_tenant_label(t))}">{_e(_tenant_label(t))}</th>' for t in owners)
    rows = []
    for a in tenants:
        if a not in owners and not any(m["counts"][a].values()):
            continue  # the "*" and "" rows only when some finding is theirs
        cells = []
        for b in owners:
            n = m["counts"][a][b]
            detail = m["checks"].get(a, {}).get(b, {})
            why = ", ".join(f"{cid} {k}" for cid, k in detail.items())
            title = f"{_tenant_label(a)} → {_tenant_label(b)}: {_plural(n, 'finding')}" + (f" ({why})" if why else "")
            if a == b:
                cells.append(f'<td class="diag" title="{_e(title)}">{n or "—"}</td>')
            elif n:
                bg, fg = _heat_colour(n, m["max"])
                cells.append(f'<td style="background:{bg};color:{fg}" title="{_e(title)}">{n}</td>')
            else:
                cells.append(f'<td style="background:#fafbfc" title="{_e(title)}"></td>')
        rows.append(f'<tr><th scope="row">{_e(_tenant_label(a))}</th>{"".join(cells)}</tr>')
    if m["total"]:
        several = (f" ({m['total']} in the cells: a finding reaching several tenants counts in each)"
                   if m["total"] != m["findings"] else "")
        note = (f"{_plural(m['findings'], 'finding')} of cross-tenant reach{several}; "
                f"darkest cell: {m['max']}. Hover a cell for the checks behind it.")
        if any(m["counts"].get(EVERY_PRINCIPAL, {}).values()):
            note += f" Row {EVERYONE}: bindings for User:*, which every tenant's principals share."
    else:
        note = ("No finding shows one tenant reaching another's topics or groups"
                + (" in the collected part of the snapshot." if run.is_partial else "."))
    unattributed = sum(m["unattributed"].values())
    if unattributed:
        note += (f" Not in the matrix: {_plural(unattributed, 'finding')} whose reach no tenant pair describes "
                 "(a cluster-level grant, a wildcard, data under no tenant's name: see its evidence's reach_unknown): "
                 + ", ".join(f"{cid} {n}" for cid, n in m["unattributed"].items()) + ".")
    return (f'<p class="note">Rows: the tenant whose principal, group or topic reaches; columns: the tenant that '
            f"owns the topic, group or records reached. {_e(note)}</p>"
            f'<div class="scroll"><table class="heat{" many" if len(owners) > 8 else ""}"><thead><tr>'
            f'<th class="corner">reaches ↓ / owner →</th>{head}'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            '<div class="legend"><span>fewer<span class="ramp"></span>more findings</span>'
            '<span><span class="sw" style="background:#fafbfc"></span>none</span>'
            '<span><span class="sw" style="background:repeating-linear-gradient(135deg,#eceff3 0 3px,#dfe3e8 3px 6px)">'
            "</span>own data (diagonal)</span></div>")


def _nice_max(value: int) -> int:
    if value <= 5:
        return max(value, 1) if value <= 1 else 5
    magnitude = 10 ** (len(str(value)) - 1)
    for step in (1, 2, 2.5, 5, 10):
        top = int(step * magnitude)
        if top >= value:
            return top
    return value


def _short_time(point: Mapping[str, Any]) -> str:
    match = re.match(r"(\d{4})-?(\d{2})-?(\d{2})T?(\d{2}):?(\d{2})", point["started"] or point["run_id"])
    return f"{match[2]}-{match[3]} {match[4]}:{match[5]}" if match else (point["run_id"] or "?")[:12]


def _trend_svg(points: list[dict[str, Any]], current: str) -> str:
    width, height = 1000, 280
    left, right, top, bottom = 48, 16, 14, 58
    plot_w, plot_h = width - left - right, height - top - bottom
    n = len(points)
    ymax = _nice_max(max((p["total"] for p in points), default=0))
    band = plot_w / max(n, 1)
    bar = max(1.0, min(46.0, band * 0.72))
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="Findings per severity over the last {n} runs" xmlns="http://www.w3.org/2000/svg">',
             '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
             'patternTransform="rotate(45)"><rect width="3" height="6" fill="#b71c1c"/></pattern></defs>']
    ticks = 5 if ymax >= 5 else ymax
    for i in range(ticks + 1):
        value = ymax * i / ticks
        y = top + plot_h - plot_h * i / ticks
        label = f"{value:g}"
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="{"#9aa3ae" if i == 0 else "#e6e9ee"}" stroke-width="1"/>'
                     f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
    label_every = max(1, math.ceil(n / 8))
    colours = {"critical": "#a61b29", "high": "#d9480f", "medium": "#e0a000", "low": "#2f6fbf", "info": "#7a8591"}
    for i, p in enumerate(points):
        cx = left + band * (i + 0.5)
        x = cx - bar / 2
        y = top + plot_h
        counts = ", ".join(f"{p[sev]} {sev}" for sev in SEVERITIES_DESC if p[sev]) or "no findings"
        delta = "" if p["delta"] is None else f"; {p['delta']:+d} vs previous run"
        tip = f"{p['run_id']} ({p['started']}), {p['status']}: {p['total']} total: {counts}{delta}"
        parts.append(f"<g><title>{_e(tip)}</title>")
        if p["run_id"] == current:
            glow = min(band, bar + 16)
            parts.append(f'<rect x="{cx - glow / 2:.1f}" y="{top}" width="{glow:.1f}" height="{plot_h}" '
                         'fill="#e3edfb"/>')
        for sev in SEVERITIES_DESC:  # critical at the bottom, where the eye starts
            if not p[sev]:
                continue
            h = plot_h * p[sev] / ymax
            y -= h
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{colours[sev]}"/>')
        if p["total"] == 0:
            parts.append(f'<rect x="{x:.1f}" y="{top + plot_h - 2:.1f}" width="{bar:.1f}" height="2" fill="#1a7f37"/>')
        if p["status"] == "partial":
            parts.append(f'<rect x="{x:.1f}" y="{top + plot_h + 3:.1f}" width="{bar:.1f}" height="7" '
                         'fill="url(#hatch)" stroke="#b71c1c" stroke-width=".5"/>')
        parts.append(f'<rect x="{cx - band / 2:.1f}" y="{top}" width="{band:.1f}" height="{plot_h + 12}" '
                     'fill="transparent"/></g>')
        if i == n - 1 or (i % label_every == 0 and band * (n - 1 - i) >= 120):  # room for the last label
            anchor = "end" if cx + 40 > width - right else "start" if cx - 40 < left else "middle"
            tx = min(cx, width - 2) if anchor == "end" else max(cx, left - 20) if anchor == "start" else cx
            parts.append(f'<text x="{tx:.1f}" y="{top + plot_h + 26}" text-anchor="{anchor}">'
                         f"{_e(_short_time(p))}</text>")
        if n <= 30 and p["total"]:
            parts.append(f'<text x="{cx:.1f}" y="{y - 4:.1f}" text-anchor="middle" '
                         f'style="fill:#1c2430;font-weight:700">{p["total"]}</text>')
    legend_x = left
    for sev in SEVERITIES_DESC:
        parts.append(f'<rect x="{legend_x}" y="{height - 16}" width="11" height="11" rx="2" fill="{colours[sev]}"/>'
                     f'<text x="{legend_x + 16}" y="{height - 6}">{sev}</text>')
        legend_x += 86
    parts.append(f'<rect x="{legend_x}" y="{height - 16}" width="16" height="11" fill="url(#hatch)" '
                 f'stroke="#b71c1c" stroke-width=".5"/><text x="{legend_x + 21}" y="{height - 6}">'
                 "partial snapshot</text>"
                 f'<rect x="{legend_x + 150}" y="{height - 16}" width="16" height="11" fill="#e3edfb"/>'
                 f'<text x="{legend_x + 171}" y="{height - 6}">this run</text></svg>')
    return "".join(parts)


def _trend(run: AuditRun, history: list[dict[str, Any]]) -> str:
    points = _with_current(run, history)
    at = next(i for i, p in enumerate(points) if p["run_id"] == run.run_id)
    current, previous = points[at], points[at - 1] if at else None
    if previous is None:
        note = f"{_plural(len(points), 'run')} recorded; this run is the first: the trend starts here."
    else:
        change = current["total"] - previous["total"]
        word = "more" if change > 0 else "fewer"
        note = (f"{_plural(len(points), 'run')} recorded. This run: {_plural(current['total'], 'finding')}, "
                + (f"{abs(change)} {word} than the previous run ({previous['run_id']})."
                   if change else f"as many as the previous run ({previous['run_id']})."))
    recent = points[-8:][::-1]
    rows = "".join(
        f'<tr><td class="mono">{_e(p["run_id"])}</td><td>{_e(p["started"])}</td><td>{_status_pill(p["status"])}</td>'
        + "".join(f'<td class="num{"" if p[sev] else " zero"}">{p[sev]}</td>' for sev in SEVERITIES_DESC)
        + f'<td class="num"><strong>{p["total"]}</strong></td>'
        f'<td class="num">{"" if p["delta"] is None else format(p["delta"], "+d")}</td></tr>' for p in recent)
    head = "".join(f'<th class="num">{s}</th>' for s in SEVERITIES_DESC)
    return (f'<p class="note">{_e(note)} Bars stack the findings of each run by severity (critical at the bottom); '
            "hover a bar for its counts.</p>" + _trend_svg(points, run.run_id)
            + f'<h4>Latest runs</h4><div class="scroll"><table><thead><tr><th>run</th><th>started</th><th>status</th>'
            f'{head}<th class="num">total</th><th class="num">Δ</th></tr></thead><tbody>{rows}</tbody></table></div>')


def _checks_table(run: AuditRun, s: Mapping[str, Any], checks: Mapping[str, Mapping[str, Any]]) -> str:
    order = sorted(checks, key=lambda cid: (-s["by_check"][cid], -severity_rank(checks[cid]["severity"]), cid))
    rows = []
    for cid in order:
        c, n = checks[cid], s["by_check"][cid]
        ident = (f'<a href="#{_anchor("check-", cid)}" class="mono">{_e(cid)}</a>' if n
                 else f'<span class="mono">{_e(cid)}</span>')
        rows.append(f'<tr{"" if n else " class=dim"}><td>{ident}</td><td>{_e(c["title"])}</td>'
                    f"<td>{_badge(c['severity'])}</td>"
                    f'<td class="num{"" if n else " zero"}"><strong>{n}</strong></td></tr>')
    note = ("Checks ran on a partial snapshot: a zero means nothing was found in what was collected."
            if run.is_partial else "Every check of the catalog ran; a zero means the check passed.")
    return (f'<p class="note">{_e(note)}</p><div class="scroll"><table><thead><tr><th>check</th>'
            f'<th>what it catches</th><th>severity</th><th class="num">findings</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _evidence_value(value: Any) -> str:
    if value is None:
        return '<span class="empty">null</span>'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _e(value)
    if isinstance(value, str):
        return _e(value) if value else '<span class="empty">(empty)</span>'
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value) and len(value) <= 20:
        return ", ".join(f"<code>{_e(v)}</code>" for v in value) or '<span class="empty">(none)</span>'
    if isinstance(value, dict) and len(value) <= 24 and all(
            isinstance(v, str | int | float | bool) or v is None or (
                isinstance(v, list) and len(v) <= 8 and all(isinstance(x, str | int | float) for x in v))
            for v in value.values()):
        chips = "".join(f'<span class="chip"><b>{_e(k)}</b>{_e(_scalar_text(v))}</span>' for k, v in value.items())
        return f'<span class="chips">{chips}</span>' if chips else '<span class="empty">(none)</span>'
    return f"<pre>{_e(json.dumps(value, indent=2, sort_keys=True, default=str))}</pre>"


def _scalar_text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _reach_value(value: Any) -> str:
    """The evidence contract's `reach` as "a → b" chips (anything malformed as plain evidence)."""
    pairs = reach_of({REACH: value})
    if not isinstance(value, list) or len(pairs) != len(value):
        return _evidence_value(value)
    if not pairs:
        return '<span class="empty">(no tenant named)</span>'
    chips = "".join(f'<span class="chip">{_e(_tenant_label(a))} → {_e(b)}</span>' for a, b in pairs)
    return f'<span class="chips">{chips}</span>'


def _finding_html(number: int, f: Mapping[str, Any]) -> str:
    cls = f["severity"] if f["severity"] in SEVERITIES else "unknown"
    resource = f"{f['resource_type']} {f['resource_name']}".strip()
    facts = [("tenant", _e(f["tenant"]) if f["tenant"] else f'<span class="empty">{_e(NO_TENANT)}</span>'),
             ("cluster", _e(f["cluster"]) or '<span class="empty">—</span>'),
             ("resource", f"<code>{_e(resource)}</code>" if resource else '<span class="empty">—</span>'),
             ("principal", f"<code>{_e(f['principal'])}</code>" if f["principal"] else '<span class="empty">—</span>')]
    pairs = reach_of(f["evidence"])
    if pairs:
        facts.append(("reaches", "; ".join(f"{_e(_tenant_label(a))} → {_e(b)}" for a, b in pairs)))
    facts_html = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in facts)
    evidence = "".join(f"<dt>{_e(k)}</dt><dd>{_reach_value(v) if k == REACH else _evidence_value(v)}</dd>"
                       for k, v in f["evidence"].items())
    evidence_html = (f'<dl class="evidence">{evidence}</dl>' if evidence
                     else '<p class="empty">No evidence recorded.</p>')
    return (f'<article class="finding sev-{cls}" id="finding-{number}">'
            f'<p class="msg">{_badge(f["severity"])} {_e(f["message"]) or _e(f["check_id"])}'
            f'<span class="fid">#{number} · {_e(f["check_id"])}</span></p>'
            f'<dl class="facts">{facts_html}</dl>'
            f'<div class="sub">Evidence</div>{evidence_html}'
            f'<div class="sub">Remediation</div><p class="remediation">{_e(f["remediation"]) or "—"}</p></article>')


def _findings_html(run: AuditRun, findings: list[dict[str, Any]], checks: Mapping[str, Mapping[str, Any]]) -> str:
    if not findings:
        return ('<p class="empty">No findings'
                + (" in the collected part of the snapshot (see the banner above).</p>" if run.is_partial else ".</p>"))
    out: list[str] = []
    anchored: set[str] = set()
    number = 0
    for sev in _severity_order(f["severity"] for f in findings):
        group = [f for f in findings if f["severity"] == sev]
        if not group:
            continue
        out.append(f'<div class="group" id="{_anchor("severity-", sev)}"><h3>{_badge(sev)} '
                   f"{_e(_plural(len(group), 'finding'))}</h3>")
        for cid in sorted({f["check_id"] for f in group}):
            in_check = [f for f in group if f["check_id"] == cid]
            c = checks[cid]
            anchor = "" if cid in anchored else f' id="{_anchor("check-", cid)}"'
            anchored.add(cid)
            out.append(f'<div class="check-head"{anchor}>'
                       f'<h4><span class="mono">{_e(cid)}</span> — {_e(c["title"])} ({len(in_check)})</h4>'
                       + (f"<p>{_e(c['rationale'])}</p>" if c["rationale"] else "") + "</div>")
            for f in in_check:
                number += 1
                out.append(_finding_html(number, f))
        out.append("</div>")
    return "".join(out)


def html_report(run: AuditRun, history: list[dict[str, Any]]) -> str:
    """One self-contained HTML page (inline CSS and SVG, no script, no external resource)."""
    s = summary(run)
    findings = _findings(run)
    checks = _checks(run, findings)
    meta = [("repository", run.repo), ("started", run.started), ("clusters", ", ".join(run.clusters) or "—"),
            ("tenants", str(len(run.tenants))), ("records scanned", f"{run.records_scanned:,}"),
            ("duration", f"{run.seconds:.1f} s"), ("tool", f"mm2gov {__version__}")]
    meta_html = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in meta)
    sections = [
        ("tenants", "Findings per tenant and severity",
         '<p class="note">Tenants with the most severe findings first. '
         f"{_e(NO_TENANT)} holds findings on objects no tenant owns.</p>" + _tenant_table(s)),
        ("access", "Cross-tenant access matrix", _matrix(run)),
        ("trend", "Trend over past runs", _trend(run, history)),
        ("checks", "Checks", _checks_table(run, s, checks)),
        ("findings", f"Findings ({s['total']})", _findings_html(run, findings, checks)),
    ]
    toc = "".join(f'<a href="#{sid}">{_e(title)}</a>' for sid, title, _ in sections)
    body = "".join(f'<section class="block" id="{sid}"><h2>{_e(title)}</h2>{content}</section>'
                   for sid, title, content in sections)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">"
        f"<title>mm2gov audit {_e(run.run_id)}: {_e(s['status'])}</title>"
        f"<style>{CSS}</style></head>"
        f'<body data-status="{_e(s["status"])}"><main>'
        '<header class="masthead"><div><div class="eyebrow">mm2gov · MirrorMaker 2 tenancy audit</div>'
        f'<h1>Audit report</h1><div class="runid mono">run {_e(run.run_id)}</div></div>'
        f'<dl class="meta">{meta_html}</dl></header>'
        + _banner(run, s) + _cards(s)
        + f'<nav class="toc">{toc}</nav>' + body
        + f"<footer>Generated by mm2gov {_e(__version__)} from run {_e(run.run_id)}. "
        "Evidence names partitions, offsets, bindings and counts, never record contents.</footer>"
        "</main></body></html>\n"
    )


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_reports(run: AuditRun, history: list[dict[str, Any]], out: Path, formats: set[str]) -> dict[str, Path]:
    """Write OUT/audit.json, OUT/audit.sarif and/or OUT/report.html (the formats asked); returns format -> path."""
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise ValueError(f"unknown report format(s): {', '.join(unknown)} (known: {', '.join(sorted(FORMATS))})")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for fmt in sorted(formats):
        path = out / FORMATS[fmt]
        if fmt == "json":
            _write(path, json.dumps(json_document(run), indent=2, ensure_ascii=False) + "\n")
        elif fmt == "sarif":
            _write(path, json.dumps(sarif_document(run), indent=2, ensure_ascii=False) + "\n")
        else:
            _write(path, html_report(run, history))
        written[fmt] = path
    return written
