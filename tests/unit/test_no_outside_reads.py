"""Nothing reads outside the repository except the documented overrides and the tool cache.

The code finds its own files relative to itself (`Path(__file__).resolve().parents[N]`, shell
`"$here/../.."`); each such anchor is resolved here and must land inside the checkout. Paths
out of it are the tool cache (`MM2GOV_CACHE`, default `~/.cache/mm2gov`), whose default is
computed in exactly the places listed below, and the environment overrides the README documents
(`MM2GOV_STRIMZI_CRDS` among them). A sibling `../shared` checkout, `$HOME` outside the cache
default, or an absolute path into this machine's layout is a defect: CI has none of them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

SOURCE_DIRS = ("governance", "spark_audit", "devstack", "tests", "bench", "oracle/src", ".ci")
SOURCE_FILES = ("Makefile",)
SUFFIXES = {".py", ".sh", ".java", ".xml", ""}

PY_ANCHOR = re.compile(r"Path\(__file__\)\.resolve\(\)((?:\.parent(?!s))*)(?:\.parents\[(\d+)\])?")
SH_ANCHOR = re.compile(r'"\$here((?:/\.\.)+)"')
# the cache default: one expression in Python, one line per install script
CACHE_DEFAULT_PY = 'Path.home() / ".cache" / "mm2gov"'
CACHE_DEFAULT_SH = 'CACHE="${MM2GOV_CACHE:-$HOME/.cache/mm2gov}"'
CACHE_DEFAULT_MAKE = "export MM2GOV_CACHE ?= $(HOME)/.cache/mm2gov"
OUTSIDE = [
    (re.compile(r"\bshared\b\s*[\"']?\s*/\s*[\"']?\s*strimzi|[\"']shared[\"']\s*/"), "a sibling ../shared checkout"),
    (re.compile(r"(ROOT|root)\)?\.parent\b"), "the parent of the checkout"),
    (re.compile(r"[\"']/(work|home|root|Users)/"), "an absolute path into one machine's layout"),
    (re.compile(r"Path\.home\(\)|expanduser\(\s*[\"']~|\$HOME|\$\(HOME\)"), "the home directory"),
]


def _sources() -> list[Path]:
    found = [REPO_ROOT / name for name in SOURCE_FILES]
    for folder in SOURCE_DIRS:
        found += [p for p in (REPO_ROOT / folder).rglob("*")
                  if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts]
    return sorted(found)


def _home_allowed(line: str) -> bool:
    return any(default in line for default in (CACHE_DEFAULT_PY, CACHE_DEFAULT_SH, CACHE_DEFAULT_MAKE))


def test_the_scan_sees_the_code_and_its_anchors() -> None:
    """Guard against a scan that silently finds nothing (renamed folders, a broken pattern)."""
    sources = _sources()
    assert len(sources) > 100
    text = "\n".join(p.read_text(errors="replace") for p in sources)
    assert len(PY_ANCHOR.findall(text)) >= 10
    assert len(SH_ANCHOR.findall(text)) >= 3


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_source_reads_nothing_outside_the_repository(path: Path) -> None:
    this = path.relative_to(REPO_ROOT)
    if this == Path(__file__).relative_to(REPO_ROOT):
        return  # this file spells the patterns it forbids
    problems = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        for match in PY_ANCHOR.finditer(line):
            ups = len(match.group(1)) // len(".parent") + (int(match.group(2)) + 1 if match.group(2) else 0)
            anchor = path.resolve()
            for _ in range(ups):
                anchor = anchor.parent
            if not anchor.is_relative_to(REPO_ROOT):
                problems.append(f"{this}:{number}: resolves to {anchor}, outside the repository")
        for match in SH_ANCHOR.finditer(line):
            anchor = (path.parent / match.group(1).lstrip("/")).resolve()
            if not anchor.is_relative_to(REPO_ROOT):
                problems.append(f"{this}:{number}: resolves to {anchor}, outside the repository")
        for pattern, what in OUTSIDE:
            if pattern.search(line) and not (what == "the home directory" and _home_allowed(line)):
                problems.append(f"{this}:{number}: reads {what}: {line.strip()}")
    assert not problems, "\n".join(problems)


def test_the_strimzi_crds_come_from_the_cache_or_the_documented_override(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    from devstack import tools

    monkeypatch.setenv("MM2GOV_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("MM2GOV_STRIMZI_CRDS", raising=False)
    version = tools.versions()["STRIMZI_VERSION"]
    missing = rf"Strimzi {version} CRDs not found at .*make setup.*MM2GOV_STRIMZI_CRDS"
    with pytest.raises(tools.MissingTool, match=missing):
        tools.strimzi_crds()
    generated = tmp_path / "cache" / f"strimzi-crds-{version}"
    generated.mkdir(parents=True)
    (generated / "048-Crd-kafkamirrormaker2.yaml").write_text("kind: CustomResourceDefinition\n")
    with pytest.raises(tools.MissingTool):  # half-generated (no .complete marker): not used
        tools.strimzi_crds()
    (generated / ".complete").touch()
    assert tools.strimzi_crds() == generated

    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("MM2GOV_STRIMZI_CRDS", str(empty))
    with pytest.raises(tools.MissingTool, match=r"holds no \*Crd\*\.yaml"):
        tools.strimzi_crds()
    monkeypatch.setenv("MM2GOV_STRIMZI_CRDS", str(generated))
    assert tools.strimzi_crds() == generated
