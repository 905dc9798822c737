"""Packaging: the wheel is the product, its packages found by setuptools (no hand-kept list), every data file
of the code in it, the built-in data read as package data, and `mm2gov audit` without the `audit` extra says
how to install it. The wheel itself, built and installed in a fresh venv, is checked file by file in
tests/integration/test_wheel.py."""

from __future__ import annotations

import fnmatch
import sys
import tomllib
from pathlib import Path

import pytest

from governance import resources
from spark_audit.report import html_page
from tests.conftest import REPO_ROOT

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
NOT_SHIPPED = {"devstack", "tests", "bench", "examples"}  # the checkout's dev and test side


def discovered() -> dict[str, Path]:
    """Package -> folder, as setuptools finds them with no `packages` key: each package-dir entry and every
    folder under it whose name is an identifier (setuptools.discovery, the explicit layout)."""
    found = {}
    for package, folder in SETUPTOOLS["package-dir"].items():
        root = REPO_ROOT / folder
        found[package] = root
        for path in root.rglob("*"):
            parts = path.relative_to(root).parts
            if path.is_dir() and all(part.isidentifier() for part in parts) and "__pycache__" not in parts:
                found[".".join((package, *parts))] = path
    return found


def test_the_packages_are_found_under_the_product_folders_only() -> None:
    assert "packages" not in SETUPTOOLS, "no package list: setuptools finds them (pyproject.toml says how)"
    mapped = SETUPTOOLS["package-dir"]
    assert {name for name in mapped if "." not in name} == {"governance", "spark_audit"}
    assert all((REPO_ROOT / folder / "__init__.py").is_file() for folder in mapped.values())
    assert not {Path(folder).parts[0] for folder in mapped.values()} & NOT_SHIPPED
    # every top-level package of the checkout is in the wheel or on its dev and test side, never both
    tops = {p.name for p in REPO_ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert tops - set(mapped.values()) == {"devstack", "tests"}
    found = discovered()
    assert {"governance.cli", "governance.compile.monitoring", "spark_audit.report.templates",
            "governance._policies.mm2gov.rules", "governance._audits.acl_stale", "governance._k8s.tenant"} <= set(found)
    assert not [name for name in found if "devstack" in name.split(".")]
    assert set(SETUPTOOLS["package-data"]) <= set(found), "a package-data key names no package"


def test_every_data_file_of_the_code_is_package_data() -> None:
    """What sits in governance/ or spark_audit/ besides Python and READMEs (the report's templates, the pinned
    versions, Spark's log4j conf), each audit check's metadata.yaml in audits/ and the Rego library in
    policies/ is matched by a package-data pattern (setuptools globs it in the package's folder); the checks'
    passed/failed fixtures and the Rego tests are not (they stay in the repo)."""
    found = discovered()
    excluded = SETUPTOOLS["exclude-package-data"]["*"]
    shipped = {f for package, patterns in SETUPTOOLS["package-data"].items()
               for pattern in patterns for f in found[package].glob(pattern)
               if f.is_file() and not any(fnmatch.fnmatch(f.name, x) for x in excluded)}
    data = {f for top in ("governance", "spark_audit") for f in (REPO_ROOT / top).rglob("*")
            if f.is_file() and f.suffix not in (".py", ".pyc", ".md") and "__pycache__" not in f.parts}
    metadata = set((REPO_ROOT / "audits").glob("*/metadata.yaml"))
    rego = {f for f in (REPO_ROOT / "policies").rglob("*.rego") if not f.name.endswith("_test.rego")}
    unshipped = sorted(map(str, (data | metadata | rego) - shipped))
    assert unshipped == [], "add to [tool.setuptools.package-data] in pyproject.toml"
    names = {f.relative_to(REPO_ROOT).as_posix() for f in shipped}
    assert {"audits/acl_stale/metadata.yaml", "spark_audit/report/templates/report.html.j2",
            "spark_audit/report/templates/report.css", "governance/versions.env",
            "policies/mm2gov/rules/grants.rego"} <= names
    fixtures = {f for f in (REPO_ROOT / "audits").rglob("*.yaml") if f.parent.name in ("passed", "failed")}
    assert fixtures and not fixtures & shipped
    assert not [name for name in names if name.endswith("_test.rego")]


def test_builtin_data_is_read_from_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (resources.POLICIES_ENV, resources.AUDITS_ENV, resources.K8S_ENV):
        monkeypatch.delenv(name, raising=False)
    # the editable install maps the package's data onto the checkout's top-level directories
    assert resources.policies_dir() == REPO_ROOT / "policies"
    assert resources.audits_dir() == REPO_ROOT / "audits"
    assert resources.k8s_dir() == REPO_ROOT / "k8s"
    # the report's templates are the audit package's own
    template = html_page.environment().get_template("report.html.j2")
    assert Path(str(template.filename)) == REPO_ROOT / "spark_audit" / "report" / "templates" / "report.html.j2"
    assert (resources.policies_dir() / "mm2gov" / "main.rego").is_file()
    assert (resources.audits_dir() / "acl_stale" / "metadata.yaml").is_file()
    assert (resources.k8s_dir() / "tenant" / "rbac.yaml").is_file()


def test_environment_replaces_the_builtin_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(resources.POLICIES_ENV, str(tmp_path / "p"))
    monkeypatch.setenv(resources.AUDITS_ENV, str(tmp_path / "a"))
    monkeypatch.setenv(resources.K8S_ENV, str(tmp_path / "k"))
    assert (resources.policies_dir(), resources.audits_dir(), resources.k8s_dir()) == (
        tmp_path / "p", tmp_path / "a", tmp_path / "k")


def test_audit_without_pyspark_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from governance.cli import main

    monkeypatch.setitem(sys.modules, "pyspark", None)  # `import pyspark` raises ImportError
    monkeypatch.setattr(sys, "argv", ["mm2gov", "audit", str(REPO_ROOT / "examples" / "acme"),
                                      "--out", str(tmp_path / "out")])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: mm2gov audit needs PySpark, which is not installed: pip install 'mm2gov[audit]'"]
    assert not (tmp_path / "out").exists()
