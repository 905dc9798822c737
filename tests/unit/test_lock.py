"""The development and CI environment is the lock (uv.lock): it satisfies pyproject.toml, every package in
it is hash-pinned, and the venv the tests run in holds exactly its versions. `make setup` runs
`uv sync --locked`, which refuses a stale lock too; this test says which requirement is broken."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "mm2gov"


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _lock() -> dict[str, Any]:
    return tomllib.loads((ROOT / "uv.lock").read_text())


def _requirements(project: dict[str, Any]) -> list[Requirement]:
    """Every requirement pyproject.toml names: the core dependencies and each extra's."""
    listed = list(project["project"]["dependencies"])
    for extra in project["project"]["optional-dependencies"].values():
        listed += extra
    return [Requirement(text) for text in listed]


def unmet(project: dict[str, Any], lock: dict[str, Any]) -> list[str]:
    """What in pyproject.toml the lock does not satisfy, one line each (empty: the lock satisfies it)."""
    locked: dict[str, list[str]] = {}
    for package in lock["package"]:
        locked.setdefault(canonicalize_name(package["name"]), []).append(package["version"])
    problems = []
    for requirement in _requirements(project):
        name = canonicalize_name(requirement.name)
        if name == PROJECT:
            continue  # the project's own extras (dev = mm2gov[audit]): checked through their requirements
        versions = locked.get(name)
        if not versions:
            problems.append(f"{requirement}: not in uv.lock")
        elif not any(requirement.specifier.contains(Version(v), prereleases=True) for v in versions):
            problems.append(f"{requirement}: uv.lock has {', '.join(versions)}")
    [own] = [p for p in lock["package"] if p["name"] == PROJECT]
    recorded = {canonicalize_name(r["name"]) for r in own["metadata"]["requires-dist"]}
    declared = {canonicalize_name(r.name) for r in _requirements(project)}
    if recorded != declared:
        problems.append(f"uv.lock was resolved for other requirements: {sorted(recorded ^ declared)}")
    return problems


def test_the_lock_satisfies_pyproject():
    assert unmet(_pyproject(), _lock()) == []


@pytest.mark.parametrize("doctor", ["version", "missing", "requirement"])
def test_a_lock_that_does_not_satisfy_pyproject_is_refused(doctor):
    project, lock = _pyproject(), _lock()
    if doctor == "version":  # pyproject pins pyspark==4.0.0; a lock with another version must be refused
        [pyspark] = [p for p in lock["package"] if p["name"] == "pyspark"]
        pyspark["version"] = "3.5.7"
    elif doctor == "missing":
        lock["package"] = [p for p in lock["package"] if p["name"] != "pyyaml"]
    else:  # a requirement added to pyproject.toml after the lock was made
        project["project"]["dependencies"].append("rich>=13")
    assert unmet(project, lock) != []


def test_every_locked_package_is_hash_pinned():
    unpinned = []
    for package in _lock()["package"]:
        if package["name"] == PROJECT:
            continue  # the checkout itself, installed editable
        files = package.get("wheels", []) + ([package["sdist"]] if "sdist" in package else [])
        if not files or not all(f.get("hash", "").startswith("sha256:") for f in files):
            unpinned.append(package["name"])
    assert unpinned == []


def test_the_venv_is_the_lock():
    """What the tests run with is what uv.lock says: no package of another version, none from elsewhere."""
    locked = {canonicalize_name(p["name"]): p["version"] for p in _lock()["package"]}
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()}
    assert installed[PROJECT] == locked[PROJECT]
    differs = {name: (version, locked.get(name)) for name, version in installed.items()
               if name not in locked or Version(locked[name]) != Version(version)}
    assert differs == {}


def test_make_lock_moves_the_resolution_date():
    """The lock is reproducible: re-resolving it (uv sync --locked) sees no release newer than the lock's date."""
    assert _pyproject()["tool"]["uv"]["exclude-newer"] == _lock()["options"]["exclude-newer"]
