"""The check catalog: what each check says about itself, declared once in `audits/` (prowler-style, a folder per check).

`audits/<check_id_lower>/metadata.yaml` holds the check's id, title, severity, rationale,
remediation and what it catches; the detector is `spark_audit/checks/<check_id_lower>.py`. Severity
and remediation live there, not in code, so a reviewer changes what a finding says without touching
a detector. `audits/` is the audit's declarative side as `policies/` is the policy's: package data
(`governance._audits`, found by governance.resources.audits_dir, `$MM2GOV_AUDITS` replaces it), so a
wheel carries the metadata and an editable install reads the checkout's. The catalog is checked when
loaded: a missing or extra key, an unknown severity, an id that is not its folder's name or a check
folder without metadata.yaml is an error naming the file.

Reading the catalog imports no detector, hence no PySpark: `mm2gov audit` reads it before it
checks that PySpark is installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from governance.resources import audits_dir

SEVERITIES = ("info", "low", "medium", "high", "critical")
KEYS = ("id", "title", "severity", "rationale", "remediation", "catches")
METADATA = "metadata.yaml"


@dataclass(frozen=True)
class CheckMeta:
    id: str
    title: str
    severity: str
    rationale: str
    remediation: str
    catches: tuple[str, ...]


def check_folders(root: Path) -> list[Path]:
    """The check folders of `root` (an `audits/` directory), by name; `_`/`.` names (the package's
    `__init__.py`, caches) are not checks. Every other folder must hold a metadata.yaml."""
    folders = sorted((f for f in root.iterdir() if f.is_dir() and not f.name.startswith(("_", "."))),
                     key=lambda f: f.name)
    for folder in folders:
        if not (folder / METADATA).is_file():
            raise ValueError(f"{folder}: a check's folder without its {METADATA}")
    return folders


def load_meta(folder: Path) -> CheckMeta:
    """The metadata.yaml of one check's folder, checked."""
    path = folder / METADATA
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or set(data) != set(KEYS):
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{path}: expected keys {', '.join(KEYS)}, got {got}")
    if not isinstance(data["id"], str) or data["id"].lower() != folder.name or not data["id"].isupper():
        raise ValueError(f"{path}: id {data['id']!r} is not its folder's name {folder.name!r} in upper case")
    if data["severity"] not in SEVERITIES:
        raise ValueError(f"{path}: severity {data['severity']!r} is not one of {', '.join(SEVERITIES)}")
    catches = data["catches"]
    if not isinstance(catches, list) or not catches or not all(isinstance(c, str) for c in catches):
        raise ValueError(f"{path}: catches must be a non-empty list of strings")
    return CheckMeta(**{**{k: str(data[k]).strip() for k in KEYS if k != "catches"},
                        "catches": tuple(c.strip() for c in catches)})


def catalog(directory: Path | None = None) -> dict[str, CheckMeta]:
    """Every check's metadata by id, in the order of the folder names: the folders of `directory`
    (default `governance.resources.audits_dir()`, read once per directory)."""
    return _catalog(directory or audits_dir())


@cache
def _catalog(root: Path) -> dict[str, CheckMeta]:
    return {meta.id: meta for meta in map(load_meta, check_folders(root))}


def meta(check_id: str) -> CheckMeta:
    try:
        return catalog()[check_id]
    except KeyError:
        raise KeyError(f"no catalog entry for {check_id}: {audits_dir() / check_id.lower() / METADATA}") from None
