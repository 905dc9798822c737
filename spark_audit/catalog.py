"""The check catalog: `audits/checks/<CHECK_ID>.yaml`, one file per check (prowler-style metadata).

Severity and remediation live there, not in code, so a reviewer changes what a
finding says without touching a detector. The catalog is checked when loaded:
a missing key or an unknown severity is an error naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from governance import resources

SEVERITIES = ("info", "low", "medium", "high", "critical")
KEYS = ("id", "title", "severity", "rationale", "remediation", "catches")
CATALOG_ENV = resources.AUDIT_CATALOG_ENV


@dataclass(frozen=True)
class CheckMeta:
    id: str
    title: str
    severity: str
    rationale: str
    remediation: str
    catches: tuple[str, ...]


def catalog_dir() -> Path:
    """`$MM2GOV_AUDIT_CATALOG`, else the package's copy of `audits/checks` (governance.resources)."""
    return resources.audit_catalog_dir()


def load_meta(path: Path) -> CheckMeta:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or set(data) != set(KEYS):
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{path}: expected keys {', '.join(KEYS)}, got {got}")
    if data["id"] != path.stem:
        raise ValueError(f"{path}: id {data['id']!r} differs from the file name")
    if data["severity"] not in SEVERITIES:
        raise ValueError(f"{path}: severity {data['severity']!r} is not one of {', '.join(SEVERITIES)}")
    catches = data["catches"]
    if not isinstance(catches, list) or not catches or not all(isinstance(c, str) for c in catches):
        raise ValueError(f"{path}: catches must be a non-empty list of strings")
    return CheckMeta(**{**{k: str(data[k]).strip() for k in KEYS if k != "catches"},
                        "catches": tuple(c.strip() for c in catches)})


@cache
def catalog(directory: Path | None = None) -> dict[str, CheckMeta]:
    """Every check's metadata by id."""
    root = directory or catalog_dir()
    return {meta.id: meta for meta in map(load_meta, sorted(root.glob("*.yaml")))}


def meta(check_id: str) -> CheckMeta:
    try:
        return catalog()[check_id]
    except KeyError:
        raise KeyError(f"no catalog entry {catalog_dir()}/{check_id}.yaml") from None
