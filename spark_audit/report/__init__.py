"""The audit's reports: JSON (CONTRACT.md findings), SARIF 2.1.0 and one self-contained HTML file.

Pure functions over an `AuditRun` (plain Python values, no Spark): the job collects the findings
DataFrame into dicts, reads the history rows it keeps as Parquet under OUT/history/, and calls
`write_reports`. One module per concern:

| module | what |
|---|---|
| `audit_run.py` | `AuditRun`, findings normalised and sorted, the checks of a run |
| `summary.py` | `summary` (counts, status) and `access_matrix` (tenant x tenant reach) |
| `history.py` | `history_row` (one Parquet row per run) and `trend` |
| `replication.py` | `replication_summary`: REPLICATION_GAP's missing and duplicated rates per flow |
| `json_doc.py` | `json_document`: audit.json |
| `sarif.py` | `sarif_document`: audit.sarif |
| `html_page.py` | `html_report`: report.html, from `templates/` (Jinja2, autoescape on) |

A partially collected snapshot is never "clean": `summary` reports status "partial" whenever
`partial` or `problems` is non-empty, whatever the findings, the SARIF invocation is marked
unsuccessful and the HTML banner says so.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from spark_audit.report.audit_run import AuditRun, check_entry, finding
from spark_audit.report.history import history_row, trend
from spark_audit.report.html_page import html_report
from spark_audit.report.json_doc import json_document
from spark_audit.report.replication import replication_summary
from spark_audit.report.sarif import sarif_document
from spark_audit.report.summary import access_matrix, summary

__all__ = ["FORMATS", "AuditRun", "access_matrix", "check_entry", "finding", "history_row", "html_report",
           "json_document", "replication_summary", "sarif_document", "summary", "trend", "write_reports"]

FORMATS = {"json": "audit.json", "sarif": "audit.sarif", "html": "report.html"}


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
