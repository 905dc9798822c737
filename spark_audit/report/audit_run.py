"""What every report reads: one `AuditRun`, its findings in the CONTRACT.md shape, its checks.

Plain Python values, no Spark. Findings are normalised here once (every key a string, evidence
a dict, severity lower case) and sorted worst first; the other modules of the package never
read a raw finding.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from governance import __version__
from governance.policy.engine import SEVERITIES, severity_rank
from spark_audit.evidence import EVERY_PRINCIPAL, UNDECLARED

FINDING_KEYS = ("check_id", "severity", "tenant", "cluster", "resource_type", "resource_name", "principal",
                "message", "remediation", "evidence")
SEVERITIES_DESC = tuple(reversed(SEVERITIES))  # critical first
TOOL = {"name": "mm2gov", "version": __version__, "informationUri": "https://github.com/mm2gov/mm2gov"}


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


def sorted_findings(run: AuditRun) -> list[dict[str, Any]]:
    """The run's findings, normalised, worst severity first, then check, tenant, cluster, resource."""
    return sorted((finding(f) for f in run.findings), key=_sort_key)


def _sort_key(f: Mapping[str, Any]) -> tuple[Any, ...]:
    return (-severity_rank(f["severity"]), f["check_id"], f["tenant"], f["cluster"], f["resource_type"],
            f["resource_name"], f["principal"], f["message"])


def checks_of(run: AuditRun, findings: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The catalog entries, plus a bare entry for any check id only seen in findings; sorted by id."""
    entries = {cid: check_entry(cid, e) for cid, e in run.checks.items()}
    for f in findings:
        if f["check_id"] not in entries:
            entries[f["check_id"]] = check_entry(f["check_id"], {"severity": f["severity"]})
    return dict(sorted(entries.items()))


def severity_order(severities: Iterable[str]) -> list[str]:
    """Known severities critical..info, then any unknown ones (which rank worst) first."""
    unknown = sorted(set(severities) - set(SEVERITIES))
    return [*unknown, *SEVERITIES_DESC]


def tenant_order(tenants: Iterable[str]) -> list[str]:
    """Alphabetically, then "*" (every principal), then "" (no tenant)."""
    return sorted(set(tenants), key=lambda t: (t == UNDECLARED, t == EVERY_PRINCIPAL, t))
