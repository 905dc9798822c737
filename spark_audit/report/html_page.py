"""report.html: one self-contained page, drawn by the Jinja2 templates in `templates/` with autoescape on.

This module turns an `AuditRun` into plain values (counts, sentences, colours, the trend chart's
geometry); `templates/report.html.j2` lays them out (with `macros.html.j2`, `trend.svg.j2` and
`report.css`, inlined). Nothing here builds markup: every value, above all what comes from the
clusters or the governance repo (tenant and topic names, principals, messages, evidence),
reaches the page through Jinja2's autoescape. The page has no script and carries a
Content-Security-Policy that forbids scripts and any external load.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from typing import Any

import jinja2

from governance import __version__
from governance.policy.engine import SEVERITIES, severity_rank
from spark_audit.evidence import EVERY_PRINCIPAL, REACH, UNDECLARED, reach_of
from spark_audit.report.audit_run import SEVERITIES_DESC, AuditRun, checks_of, severity_order, sorted_findings
from spark_audit.report.history import with_current
from spark_audit.report.replication import replication_summary
from spark_audit.report.summary import access_matrix, summary

NO_TENANT = "(no tenant)"
EVERYONE = "every principal (User:*)"
COLOURS = {"critical": "#a61b29", "high": "#d9480f", "medium": "#e0a000", "low": "#2f6fbf", "info": "#7a8591"}


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def tenant_label(tenant: str) -> str:
    return EVERYONE if tenant == EVERY_PRINCIPAL else tenant or NO_TENANT


def anchor(value: str, prefix: str) -> str:
    """An id fragment: `prefix` + the value with anything but letters, digits, _ and - as "-"."""
    return prefix + re.sub(r"[^A-Za-z0-9_-]+", "-", value)


def severity_class(severity: str) -> str:
    return severity if severity in SEVERITIES else "unknown"


@functools.cache
def environment() -> jinja2.Environment:
    """The report's Jinja2 environment: templates/ of this package, autoescape on for every template,
    a missing value an error (StrictUndefined), block tags leaving no blank lines."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("spark_audit.report", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters.update(plural=plural, tenant_label=tenant_label, anchor=anchor, severity_class=severity_class,
                       f1=lambda value: f"{value:.1f}")
    return env


def html_report(run: AuditRun, history: list[dict[str, Any]]) -> str:
    """One self-contained HTML page (inline CSS and SVG, no script, no external resource)."""
    return environment().get_template("report.html.j2").render(page_context(run, history))


def page_context(run: AuditRun, history: list[dict[str, Any]]) -> dict[str, Any]:
    """Everything the template shows, as plain values."""
    s = summary(run)
    findings = sorted_findings(run)
    checks = checks_of(run, findings)
    return {
        "run": run, "s": s, "version": __version__, "no_tenant": NO_TENANT,
        "meta": [("repository", run.repo), ("started", run.started), ("clusters", ", ".join(run.clusters) or "—"),
                 ("tenants", str(len(run.tenants))), ("records scanned", f"{run.records_scanned:,}"),
                 ("duration", f"{run.seconds:.1f} s"), ("tool", f"mm2gov {__version__}")],
        "banner": banner(run, s),
        "cards": [{"severity": sev, "n": n} for sev, n in s["by_severity"].items() if sev in SEVERITIES or n],
        "tenant_rows": tenant_rows(s),
        "matrix": matrix(run),
        "trend": trend_view(run, history),
        "replication": replication_rows(run),
        "checks": checks_table(run, s, checks),
        "groups": finding_groups(findings, checks),
    }


def banner(run: AuditRun, s: Mapping[str, Any]) -> dict[str, str]:
    """The sentences of the status banner (which one shows is the template's, by s.status)."""
    return {
        "scopes": ", ".join(run.partial) if run.partial else "see the problems below",
        "counted": (f"{plural(s['total'], 'finding')} in what was collected" if s["total"]
                    else "no findings in what was collected, which proves nothing about the rest"),
        "severities": ", ".join(f"{n} {sev}" for sev, n in s["by_severity"].items() if n),
        "clusters": ", ".join(run.clusters) or "no cluster",
        "info": f" ({plural(s['total'], 'informational finding')})" if s["total"] else "",
    }


def tenant_rows(s: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Findings per tenant and severity, tenants with the most severe findings first."""
    severities = list(s["by_severity"])
    rows = sorted(s["by_tenant"].items(), key=lambda kv: ([-kv[1][sev] for sev in severities], kv[0] == "", kv[0]))
    return [{"tenant": tenant, "counts": [(sev, counts[sev]) for sev in severities], "total": sum(counts.values())}
            for tenant, counts in rows]


# --- the access matrix -------------------------------------------------------------------------------

def heat_colour(count: int, top: int) -> tuple[str, str]:
    """Background and text colour on a light-to-dark red ramp (square-root scale)."""
    lo, hi = (0xFD, 0xE0, 0xDD), (0x67, 0x00, 0x0D)
    t = math.sqrt(count / top) if top else 0.0
    rgb = tuple(round(a + (b - a) * t) for a, b in zip(lo, hi, strict=True))
    return "#{:02x}{:02x}{:02x}".format(*rgb), "#fff" if t > 0.45 else "#3d0006"


def matrix(run: AuditRun) -> dict[str, Any] | None:
    """The heat map of `access_matrix`: rows who reaches, columns whose data; None without tenants."""
    m = access_matrix(run)
    tenants = m["tenants"]
    if not tenants:
        return None
    owners = [t for t in tenants if t not in (EVERY_PRINCIPAL, UNDECLARED)]  # whose data: always a tenant
    rows = []
    for a in tenants:
        if a not in owners and not any(m["counts"][a].values()):
            continue  # the "*" and "" rows only when some finding is theirs
        cells = []
        for b in owners:
            n = m["counts"][a][b]
            why = ", ".join(f"{cid} {k}" for cid, k in m["checks"].get(a, {}).get(b, {}).items())
            title = f"{tenant_label(a)} → {tenant_label(b)}: {plural(n, 'finding')}" + (f" ({why})" if why else "")
            kind = "diagonal" if a == b else "hit" if n else "none"
            bg, fg = heat_colour(n, m["max"]) if kind == "hit" else ("", "")
            cells.append({"kind": kind, "n": n, "title": title, "background": bg, "colour": fg})
        rows.append({"tenant": a, "cells": cells})
    if m["total"]:
        several = (f" ({m['total']} in the cells: a finding reaching several tenants counts in each)"
                   if m["total"] != m["findings"] else "")
        note = (f"{plural(m['findings'], 'finding')} of cross-tenant reach{several}; "
                f"darkest cell: {m['max']}. Hover a cell for the checks behind it.")
        if any(m["counts"].get(EVERY_PRINCIPAL, {}).values()):
            note += f" Row {EVERYONE}: bindings for User:*, which every tenant's principals share."
    else:
        note = ("No finding shows one tenant reaching another's topics or groups"
                + (" in the collected part of the snapshot." if run.is_partial else "."))
    unattributed = sum(m["unattributed"].values())
    if unattributed:
        note += (f" Not in the matrix: {plural(unattributed, 'finding')} whose reach no tenant pair describes "
                 "(a cluster-level grant, a wildcard, data under no tenant's name: see its evidence's reach_unknown): "
                 + ", ".join(f"{cid} {n}" for cid, n in m["unattributed"].items()) + ".")
    return {"owners": owners, "rows": rows, "note": note, "many": len(owners) > 8}


# --- the trend -------------------------------------------------------------------------------------------

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


def trend_chart(points: list[dict[str, Any]], current: str) -> dict[str, Any]:
    """The geometry of the stacked bar chart (one bar per run, critical at the bottom) that
    templates/trend.svg.j2 draws: a 1000 x 280 viewBox, numbers only."""
    width, height = 1000, 280
    left, right, top, bottom = 48, 16, 14, 58
    plot_w, plot_h = width - left - right, height - top - bottom
    n = len(points)
    ymax = _nice_max(max((p["total"] for p in points), default=0))
    band = plot_w / max(n, 1)
    bar = max(1.0, min(46.0, band * 0.72))
    steps = 5 if ymax >= 5 else ymax
    ticks = [{"y": top + plot_h - plot_h * i / steps, "label": f"{ymax * i / steps:g}", "axis": i == 0}
             for i in range(steps + 1)]
    label_every = max(1, math.ceil(n / 8))
    bars = []
    for i, p in enumerate(points):
        cx = left + band * (i + 0.5)
        x = cx - bar / 2
        y = top + plot_h
        counts = ", ".join(f"{p[sev]} {sev}" for sev in SEVERITIES_DESC if p[sev]) or "no findings"
        delta = "" if p["delta"] is None else f"; {p['delta']:+d} vs previous run"
        segments = []
        for sev in SEVERITIES_DESC:  # critical at the bottom, where the eye starts
            if p[sev]:
                h = plot_h * p[sev] / ymax
                y -= h
                segments.append({"y": y, "height": h, "fill": COLOURS[sev]})
        label = None
        if i == n - 1 or (i % label_every == 0 and band * (n - 1 - i) >= 120):  # room for the last label
            where = "end" if cx + 40 > width - right else "start" if cx - 40 < left else "middle"
            tx = min(cx, width - 2) if where == "end" else max(cx, left - 20) if where == "start" else cx
            label = {"x": tx, "anchor": where, "text": _short_time(p)}
        bars.append({
            "cx": cx, "x": x, "top_y": y, "segments": segments, "label": label,
            "tip": f"{p['run_id']} ({p['started']}), {p['status']}: {p['total']} total: {counts}{delta}",
            "glow": min(band, bar + 16) if p["run_id"] == current else None,
            "total": p["total"], "show_total": n <= 30 and p["total"] > 0, "partial": p["status"] == "partial",
        })
    return {"width": width, "height": height, "left": left, "right": right, "top": top, "plot_h": plot_h,
            "runs": n, "band": band, "bar": bar, "ticks": ticks, "bars": bars,
            "legend": [{"x": left + 86 * i, "severity": sev, "fill": COLOURS[sev]}
                       for i, sev in enumerate(SEVERITIES_DESC)],
            "legend_end": left + 86 * len(SEVERITIES_DESC)}


def trend_view(run: AuditRun, history: list[dict[str, Any]]) -> dict[str, Any]:
    """The trend section: a sentence on this run against the previous one, the chart, the latest runs."""
    points = with_current(run, history)
    at = next(i for i, p in enumerate(points) if p["run_id"] == run.run_id)
    current, previous = points[at], points[at - 1] if at else None
    if previous is None:
        note = f"{plural(len(points), 'run')} recorded; this run is the first: the trend starts here."
    else:
        change = current["total"] - previous["total"]
        word = "more" if change > 0 else "fewer"
        note = (f"{plural(len(points), 'run')} recorded. This run: {plural(current['total'], 'finding')}, "
                + (f"{abs(change)} {word} than the previous run ({previous['run_id']})."
                   if change else f"as many as the previous run ({previous['run_id']})."))
    recent = [{**p, "delta": "" if p["delta"] is None else format(p["delta"], "+d")} for p in points[-8:][::-1]]
    return {"note": note, "chart": trend_chart(points, run.run_id), "recent": recent,
            "severities": SEVERITIES_DESC}


# --- replication per flow -------------------------------------------------------------------------------

def rate_text(rate: Any) -> str:
    """A rate as a percentage that shows a few records in 100,000: 0.0000833 -> '0.0083%'."""
    return f"{float(rate) * 100:.4f}%"


def replication_rows(run: AuditRun) -> list[dict[str, Any]]:
    """`replication_summary` with its rates and counts as the table shows them."""
    return [{**row, "missing_pct": rate_text(row["missing_rate"]), "duplicated_pct": rate_text(row["duplicated_rate"]),
             "records": f"{int(row['source_records']):,}"} for row in replication_summary(run)]


# --- checks and findings ---------------------------------------------------------------------------------

def checks_table(run: AuditRun, s: Mapping[str, Any], checks: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Every check of the catalog, those with the most findings first."""
    order = sorted(checks, key=lambda cid: (-s["by_check"][cid], -severity_rank(checks[cid]["severity"]), cid))
    note = ("Checks ran on a partial snapshot: a zero means nothing was found in what was collected."
            if run.is_partial else "Every check of the catalog ran; a zero means the check passed.")
    return {"note": note, "rows": [{"id": cid, "title": checks[cid]["title"], "severity": checks[cid]["severity"],
                                    "n": s["by_check"][cid]} for cid in order]}


def _scalar_text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def evidence_value(value: Any) -> dict[str, Any]:
    """How one evidence value shows, as {"kind": ...} for the template's `evidence_value` macro:
    empty (a muted word), text, codes (a short list of scalars), chips (a small flat object:
    (key, text) pairs), pre (anything else, as indented JSON)."""
    if value is None:
        return {"kind": "empty", "text": "null"}
    if isinstance(value, bool):
        return {"kind": "text", "text": "true" if value else "false"}
    if isinstance(value, int | float | str):
        return {"kind": "text", "text": str(value)} if value != "" else {"kind": "empty", "text": "(empty)"}
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value) and len(value) <= 20:
        return {"kind": "codes", "items": [str(v) for v in value]} if value else {"kind": "empty", "text": "(none)"}
    if isinstance(value, dict) and len(value) <= 24 and all(
            isinstance(v, str | int | float | bool) or v is None or (
                isinstance(v, list) and len(v) <= 8 and all(isinstance(x, str | int | float) for x in v))
            for v in value.values()):
        if not value:
            return {"kind": "empty", "text": "(none)"}
        return {"kind": "chips", "items": [(str(k), _scalar_text(v)) for k, v in value.items()]}
    return {"kind": "pre", "text": json.dumps(value, indent=2, sort_keys=True, default=str)}


def reach_value(value: Any) -> dict[str, Any]:
    """The evidence contract's `reach` as "a → b" chips (anything malformed as plain evidence)."""
    pairs = reach_of({REACH: value})
    if not isinstance(value, list) or len(pairs) != len(value):
        return evidence_value(value)
    if not pairs:
        return {"kind": "empty", "text": "(no tenant named)"}
    return {"kind": "chips", "items": [(None, f"{tenant_label(a)} → {b}") for a, b in pairs]}


def finding_view(number: int, f: Mapping[str, Any]) -> dict[str, Any]:
    pairs = reach_of(f["evidence"])
    return {**f, "number": number, "resource": f"{f['resource_type']} {f['resource_name']}".strip(),
            "reaches": "; ".join(f"{tenant_label(a)} → {b}" for a, b in pairs),
            "evidence": [(str(k), reach_value(v) if k == REACH else evidence_value(v))
                         for k, v in f["evidence"].items()]}


def finding_groups(findings: list[dict[str, Any]], checks: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Findings by severity (worst first), then by check; numbered in that order. A check's anchor
    (`#check-<ID>`, linked from the checks table) is on its first group."""
    groups: list[dict[str, Any]] = []
    anchored: set[str] = set()
    number = 0
    for sev in severity_order(f["severity"] for f in findings):
        group = [f for f in findings if f["severity"] == sev]
        if not group:
            continue
        by_check = []
        for cid in sorted({f["check_id"] for f in group}):
            views = []
            for f in (f for f in group if f["check_id"] == cid):
                number += 1
                views.append(finding_view(number, f))
            by_check.append({"id": cid, "title": checks[cid]["title"], "rationale": checks[cid]["rationale"],
                             "anchored": cid not in anchored, "findings": views})
            anchored.add(cid)
        groups.append({"severity": sev, "count": len(group), "checks": by_check})
    return groups
