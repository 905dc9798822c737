"""Violations for people (text, Markdown), scripts (JSON) and CI systems (SARIF, JUnit)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any
from xml.etree import ElementTree as ET

from governance import __version__
from governance.policy.engine import SEVERITIES, Violation, at_or_above, severity_rank

SARIF_LEVEL = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}


def summary(violations: Iterable[Violation]) -> str:
    counts = Counter(v.severity for v in violations)
    if not counts:
        return "no violations"
    parts = [f"{counts[s]} {s}" for s in reversed(SEVERITIES) if counts[s]]
    total = sum(counts.values())
    return f"{total} violation{'s' if total != 1 else ''} ({', '.join(parts)})"


def ordered(violations: Iterable[Violation]) -> list[Violation]:
    return sorted(violations, key=lambda v: (-severity_rank(v.severity), v.location, v.rule, v.message))


def text(violations: list[Violation]) -> str:
    lines = [f"{v.location or '-'}: {v.severity} {v.rule} [{v.tenant or 'cluster'}] {v.message}"
             for v in ordered(violations)]
    return "\n".join([*lines, summary(violations)]) + "\n"


def md_cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def markdown(violations: list[Violation], title: str = "Policy violations") -> str:
    if not violations:
        return f"#### {title}\n\nNone.\n"
    rows = [f"| {v.severity} | `{v.rule}` | {v.tenant or '—'} | `{md_cell(v.location)}` | {md_cell(v.message)} |"
            for v in ordered(violations)]
    return "\n".join([f"#### {title}: {summary(violations)}", "",
                      "| severity | rule | tenant | location | message |", "|---|---|---|---|---|", *rows]) + "\n"


def as_json(violations: list[Violation], **extra: Any) -> str:
    return json.dumps({"violations": [v.to_record() for v in ordered(violations)],
                       "summary": summary(violations), **extra}, indent=2, sort_keys=False) + "\n"


def sarif(violations: list[Violation], repo_dir: str) -> str:
    """SARIF 2.1.0; each result points at the file (relative to the current directory) and line."""
    rules = sorted({v.rule for v in violations})
    results = []
    for v in ordered(violations):
        location: dict[str, Any] = {"artifactLocation": {"uri": str(PurePosixPath(repo_dir) / v.file)}}
        if v.line:
            location["region"] = {"startLine": v.line}
        results.append({"ruleId": v.rule, "level": SARIF_LEVEL.get(v.severity, "error"),
                        "message": {"text": v.message},
                        "properties": {"severity": v.severity, "tenant": v.tenant},
                        "locations": [{"physicalLocation": location}]})
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "mm2gov", "version": __version__,
                                      "informationUri": "https://github.com/mm2gov/mm2gov",
                                      "rules": [{"id": r, "shortDescription": {"text": r.replace("_", " ")}}
                                                for r in rules]}},
                  "results": results}],
    }
    return json.dumps(document, indent=2) + "\n"


def junit(violations: list[Violation], tenants: Iterable[str], suite: str = "mm2gov validate") -> str:
    """One test case per tenant (and one for cluster-level rules); a failure lists its violations."""
    by_tenant: dict[str, list[Violation]] = {}
    for v in ordered(violations):
        by_tenant.setdefault(v.tenant, []).append(v)
    names = ["", *sorted(set(tenants) | set(by_tenant) - {""})]
    root = ET.Element("testsuites")
    failures = sum(1 for n in names if by_tenant.get(n))
    element = ET.SubElement(root, "testsuite", name=suite, tests=str(len(names)), failures=str(failures),
                            errors="0", skipped="0")
    for name in names:
        case = ET.SubElement(element, "testcase", classname="mm2gov.policy",
                             name=f"tenant {name}" if name else "clusters")
        found = by_tenant.get(name)
        if found:
            failure = ET.SubElement(case, "failure", message=summary(found), type=found[0].rule)
            failure.text = "\n".join(f"{v.location}: {v.severity} {v.rule}: {v.message}" for v in found)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def report(output_format: str, violations: list[Violation], *, repo: str, tenants: Iterable[str], fail_on: str,
           scopes: dict[str, Any]) -> str:
    """`mm2gov validate`'s output in one of its formats (text, json, markdown, sarif, junit)."""
    if output_format == "json":
        return as_json(violations, valid=not at_or_above(violations, fail_on), fail_on=fail_on,
                       tenants=sorted(tenants), scopes=scopes)
    if output_format == "markdown":
        return markdown(violations)
    if output_format == "sarif":
        return sarif(violations, repo)
    if output_format == "junit":
        return junit(violations, tenants)
    return text(violations)
