"""The check catalog: each check's metadata beside its detector (prowler-style, a folder per check).

`spark_audit/checks/<check_id_lower>/metadata.yaml` holds the check's id, title, severity,
rationale, remediation and what it catches; `check.py` next to it is the detector. Severity and
remediation live there, not in code, so a reviewer changes what a finding says without touching a
detector. The files are package data, read with importlib.resources (a wheel carries them, an
editable install reads the checkout's). The catalog is checked when loaded: a missing or extra key,
an unknown severity or an id that is not its folder's name is an error naming the file.

Reading the catalog imports no detector, hence no PySpark: `mm2gov audit` reads it before it
checks that PySpark is installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable

import yaml

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


def checks_dir() -> Traversable:
    """The package's `spark_audit/checks/`, one folder per check.

    `files("spark_audit") / "checks"`, not `files("spark_audit.checks")`: that would import
    the package, i.e. every detector and PySpark."""
    return files("spark_audit") / "checks"


def load_meta(folder: Traversable) -> CheckMeta:
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


@cache
def catalog(directory: Traversable | None = None) -> dict[str, CheckMeta]:
    """Every check's metadata by id: each folder of `directory` (default `checks_dir()`) that holds
    a metadata.yaml, in the order of the folder names."""
    root = directory or checks_dir()
    folders = sorted((f for f in root.iterdir() if f.is_dir() and (f / METADATA).is_file()), key=lambda f: f.name)
    return {meta.id: meta for meta in map(load_meta, folders)}


def meta(check_id: str) -> CheckMeta:
    try:
        return catalog()[check_id]
    except KeyError:
        raise KeyError(f"no catalog entry for {check_id}: {checks_dir() / check_id.lower() / METADATA}") from None
