"""The wheel works without the checkout: `python -m build`, a fresh venv outside the repo with
only the wheel and its (core) dependencies, and `mm2gov validate` / `generate` there give what
they give from the checkout, reading the built-in data installed in the venv. The wheel is the
product, file by file: no dev stack, no demo, no test hook; `mm2gov devstack` and `mm2gov demo`
answer from it in one line that they belong to the source checkout.

Fast when warm: the wheel is built once per session (~5 s); the dependencies come from a
wheelhouse in the mm2gov cache (tests/tools/wheels.py), so the install needs no index and takes seconds.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from governance import __version__
from spark_audit.catalog import catalog
from spark_audit.report import AuditRun, html_report
from tests.conftest import REPO_ROOT, run_cli
from tests.tools.wheels import run as _run
from tests.tools.wheels import wheelhouse

pytestmark = pytest.mark.integration

DATA_ENV = ("MM2GOV_POLICIES", "MM2GOV_AUDITS", "MM2GOV_K8S", "PYTHONPATH")
# the header of generated files names the source repo: `acme at commit <sha>[+dirty]` or `acme (not a git checkout)`
SOURCE = re.compile(r"from acme( at commit [0-9a-f]+(\+dirty)?| \(not a git checkout\))")


@pytest.fixture(scope="session")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv outside the repo with the wheel and its core dependencies (no pyspark: the `audit` extra)."""
    venv = tmp_path_factory.mktemp("wheel-venv") / "venv"
    assert not venv.resolve().is_relative_to(REPO_ROOT)
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    house = wheelhouse(wheel, tmp_path_factory.mktemp("wheelhouse-scratch"))
    _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "--disable-pip-version-check",
          "install", "-q", "--no-index", "--find-links", str(house), str(wheel)])
    return venv


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory outside the repo with copies of the example repos."""
    work = tmp_path_factory.mktemp("wheel-work")
    shutil.copytree(REPO_ROOT / "examples" / "acme", work / "acme")
    shutil.copytree(REPO_ROOT / "examples" / "bad" / "grant_wildcard", work / "grant_wildcard")
    return work


def installed_cli(venv: Path, workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in DATA_ENV}
    return subprocess.run([str(venv / "bin" / "mm2gov"), *args], capture_output=True, text=True, timeout=300,
                          cwd=workdir, env=env)


# What the installed package finds, and what its audit catalog and HTML report give (neither needs PySpark).
INSTALLED_DATA = """
import dataclasses, json, sys, governance, spark_audit
from governance import resources as r
from spark_audit.catalog import catalog
from spark_audit.report import AuditRun, html_page, html_report
template = html_page.environment().get_template("report.html.j2")
print(json.dumps({"paths": [governance.__file__, spark_audit.__file__, str(r.policies_dir()), str(r.k8s_dir()),
                            str(r.audits_dir()), template.filename],
                  "catalog": {k: dataclasses.asdict(m) for k, m in catalog().items()},
                  "html": html_report(AuditRun(**json.loads(sys.argv[1])), [])}))
"""
AUDIT_RUN = {"run_id": "r1", "started": "2026-01-01T00:00:00Z", "repo": "acme", "clusters": ["onprem"],
             "tenants": ["payments", "<b>&"], "findings": [{"check_id": "ACL_STALE", "severity": "medium",
                                                            "tenant": "", "resource_name": "<script>x</script>"}]}


def test_installed_package_reads_its_own_data(installed: Path, workdir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in DATA_ENV}
    done = _run([str(installed / "bin" / "python"), "-c", INSTALLED_DATA, json.dumps(AUDIT_RUN)], cwd=workdir, env=env)
    got = json.loads(done.stdout)
    paths = [Path(p) for p in got["paths"]]
    for path in paths:
        assert path.exists() and path.is_relative_to(installed) and not path.is_relative_to(REPO_ROOT), path
    policies, k8s, audits, template = paths[2:]
    assert (policies / "mm2gov" / "main.rego").is_file() and not list(policies.rglob("*_test.rego"))
    assert (k8s / "tenant" / "rbac.yaml").read_bytes() == (REPO_ROOT / "k8s" / "tenant" / "rbac.yaml").read_bytes()
    # audits/, the audit's declarative side: each check's metadata.yaml, without its passed/failed fixtures
    assert {p.relative_to(audits).as_posix(): p.read_bytes() for p in audits.rglob("*.yaml")} == {
        p.relative_to(REPO_ROOT / "audits").as_posix(): p.read_bytes()
        for p in (REPO_ROOT / "audits").glob("*/metadata.yaml")}
    assert not [p for p in audits.rglob("*") if p.name in ("passed", "failed")]
    # the report's templates, the audit package's own
    here = REPO_ROOT / "spark_audit"
    assert {p.name: p.read_bytes() for p in template.parent.iterdir()} == {
        p.name: p.read_bytes() for p in (here / "report" / "templates").iterdir()}
    assert got["catalog"] == json.loads(json.dumps({k: dataclasses.asdict(m) for k, m in catalog().items()}))
    assert got["html"] == html_report(AuditRun(**AUDIT_RUN), [])  # type: ignore[arg-type]
    assert "&lt;script&gt;x&lt;/script&gt;" in got["html"] and "<script" not in got["html"]


def test_validate_from_the_wheel_matches_the_checkout(installed: Path, workdir: Path) -> None:
    for repo, code in (("acme", 0), ("grant_wildcard", 1)):
        here = installed_cli(installed, workdir, "validate", repo)
        there = run_cli("validate", str(workdir / repo))
        assert (here.returncode, there.returncode) == (code, code), here.stderr + there.stderr
        assert here.stdout == there.stdout


def test_generate_from_the_wheel_matches_the_checkout(installed: Path, workdir: Path, tmp_path: Path) -> None:
    here = installed_cli(installed, workdir, "generate", "acme", "--out", "out")
    assert here.returncode == 0, here.stderr
    there = run_cli("generate", str(REPO_ROOT / "examples" / "acme"), "--out", str(tmp_path / "out"))
    assert there.returncode == 0, there.stderr

    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): SOURCE.sub("from acme", p.read_text(encoding="utf-8")).encode()
                for p in sorted(root.rglob("*")) if p.is_file()}

    ours, theirs = files(workdir / "out"), files(tmp_path / "out")
    assert ours.keys() == theirs.keys()
    assert any(SOURCE.search(p.read_text(encoding="utf-8")) for p in (workdir / "out").rglob("*") if p.is_file())
    assert [name for name in ours if ours[name] != theirs[name]] == []


def test_audit_without_the_extra_says_how_to_install_it(installed: Path, workdir: Path) -> None:
    done = installed_cli(installed, workdir, "audit", "acme", "--out", "audit")
    assert done.returncode == 3
    assert done.stderr.strip() == ("error: mm2gov audit needs PySpark, which is not installed: "
                                   "pip install 'mm2gov[audit]'")


def expected_files() -> set[str]:
    """What the wheel holds, from the tree: every file of governance/ and spark_audit/ but READMEs, and the
    data mapped into governance: the Rego library without its tests, each audit check's metadata.yaml, the
    tenant manifests (pyproject.toml, [tool.setuptools])."""
    def files(folder: str, *patterns: str) -> set[Path]:
        return {p for pattern in patterns for p in (REPO_ROOT / folder).glob(pattern)
                if p.is_file() and "__pycache__" not in p.parts and p.name != "README.md"}

    mapped = {"policies": "governance/_policies", "audits": "governance/_audits", "k8s": "governance/_k8s"}
    found = files("governance", "**/*") | files("spark_audit", "**/*")
    found |= {p for p in files("policies", "__init__.py", "**/*.rego") if not p.name.endswith("_test.rego")}
    found |= files("audits", "__init__.py", "*/metadata.yaml") | files("k8s", "__init__.py", "tenant/*.yaml")
    names = set()
    for path in found:
        name = path.relative_to(REPO_ROOT).as_posix()
        top, _, rest = name.partition("/")
        names.add(f"{mapped[top]}/{rest}" if top in mapped else name)
    return names


def test_the_wheel_is_the_product_file_by_file(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    meta = f"mm2gov-{__version__}.dist-info/"
    assert {name for name in contents if not name.startswith(meta)} == expected_files()
    assert not [name for name in contents if "devstack" in name or name.endswith(("/demo.py", "_test.rego"))]
    # no test hook, no test double: nothing in the product names them
    for marker in (b"MM2GOV_TEST_", b"StaticNamespaces", b"RAISE_API_FLOOR"):
        assert [name for name, data in contents.items() if marker in data] == [], marker
    top_level = contents[meta + "top_level.txt"].decode().split()
    assert sorted(top_level) == ["governance", "spark_audit"]


NOT_INSTALLED = ("error: the dev stack is part of the source checkout, not of the installed mm2gov: run `mm2gov {}` "
                 "from a clone of the mm2gov repository, after `make setup`")


@pytest.mark.parametrize("args", [("devstack", "up"), ("devstack", "status", "--format", "json"),
                                  ("devstack", "up", "--help"), ("demo",)], ids=" ".join)
def test_the_dev_stack_commands_say_where_the_stack_is(installed: Path, workdir: Path, args: tuple[str, ...]) -> None:
    """From the wheel: the contract's usage error (2) in one line, no ImportError traceback, nothing started."""
    done = installed_cli(installed, workdir, *args)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.splitlines() == [NOT_INSTALLED.format(args[0])]


def test_the_dev_stack_is_not_installed(installed: Path, workdir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in DATA_ENV}
    probe = "import importlib.util as u; print(u.find_spec('devstack'), u.find_spec('governance.devstack'))"
    assert _run([str(installed / "bin" / "python"), "-c", probe], cwd=workdir, env=env).stdout.split() == [
        "None", "None"]
    helped = installed_cli(installed, workdir, "devstack", "--help")  # still documented, as in the checkout
    assert helped.returncode == 0 and "runs from a source checkout" in " ".join(helped.stdout.split())
