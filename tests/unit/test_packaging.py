"""Packaging: every package and every data file is in the wheel, the built-in data is read as package
data, and `mm2gov audit` without the `audit` extra says how to install it. The wheel itself, installed in a
fresh venv, is tested in tests/integration/test_wheel.py."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from governance import resources
from spark_audit.report import html_page
from tests.conftest import REPO_ROOT

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def source_dir(package: str) -> Path:
    """Where setuptools takes `package` from: the longest package-dir mapping, else the dotted path."""
    parts = package.split(".")
    for end in range(len(parts), 0, -1):
        mapped = SETUPTOOLS.get("package-dir", {}).get(".".join(parts[:end]))
        if mapped is not None:
            return REPO_ROOT / mapped / Path(*parts[end:])
    return REPO_ROOT / Path(*parts)


def test_every_python_package_and_data_directory_is_listed() -> None:
    listed = set(SETUPTOOLS["packages"])
    code = {".".join(p.relative_to(REPO_ROOT).parts) for top in ("governance", "spark_audit")
            for p in [REPO_ROOT / top, *(REPO_ROOT / top).rglob("*")]
            if p.is_dir() and p.name != "__pycache__" and any(f.is_file() for f in p.iterdir())}
    rego = {"governance._policies." + ".".join(p.relative_to(REPO_ROOT / "policies").parts)
            for p in (REPO_ROOT / "policies").rglob("*") if p.is_dir() and any(p.glob("*.rego"))}
    missing = (code | rego | {"governance._audits", "governance._k8s.tenant"}) - listed
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"
    assert all(source_dir(p).is_dir() for p in listed), [p for p in listed if not source_dir(p).is_dir()]


def test_every_data_file_of_the_code_is_package_data() -> None:
    """What sits in governance/ or spark_audit/ besides Python and READMEs (the report's templates, the
    install scripts, Spark's log4j conf), and each audit check's metadata.yaml in audits/, is matched by a
    package-data pattern of a listed package (setuptools globs it in the package's directory); the checks'
    passed/failed fixtures are not (they stay in the repo, like the Rego tests)."""
    shipped = {f for package, patterns in SETUPTOOLS["package-data"].items() if package in SETUPTOOLS["packages"]
               for pattern in patterns for f in source_dir(package).glob(pattern) if f.is_file()}
    data = {f for top in ("governance", "spark_audit") for f in (REPO_ROOT / top).rglob("*")
            if f.is_file() and f.suffix not in (".py", ".pyc", ".md") and "__pycache__" not in f.parts}
    metadata = set((REPO_ROOT / "audits").glob("*/metadata.yaml"))
    unshipped = sorted(map(str, (data | metadata) - shipped))
    assert unshipped == [], "add to [tool.setuptools.package-data] in pyproject.toml"
    names = {f.relative_to(REPO_ROOT).as_posix() for f in shipped}
    assert {"audits/acl_stale/metadata.yaml", "spark_audit/report/templates/report.html.j2",
            "spark_audit/report/templates/report.css"} <= names
    fixtures = {f for f in (REPO_ROOT / "audits").rglob("*.yaml") if f.parent.name in ("passed", "failed")}
    assert fixtures and not fixtures & shipped


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
