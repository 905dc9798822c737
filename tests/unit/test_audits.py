"""audits/, the audit's declarative side, checkov-style: each check's folder holds its metadata.yaml and
`passed/` and `failed/` estates, small snapshots of the clusters (tables as spark_audit.model's
SNAPSHOT_SCHEMAS, one mapping per row) judged against examples/acme's tenancy as the policy decides it (or,
for an estate that says `repo: acme-sized`, examples/acme with capacity: tests/tools/capacity.py).
One parametrised test runs every estate through its check's detector: a failed estate yields exactly the
findings it lists (by cluster and resource name), a passed one none of that check.

The detectors (spark_audit/checks/<check_id_lower>.py) and the folders are kept one-to-one here. The
planted-leak tests with their detailed evidence stay in test_audit_checks.py.
"""

from __future__ import annotations

import json
import pkgutil
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

import spark_audit.checks
from spark_audit.catalog import METADATA, catalog, check_folders
from spark_audit.checks import CHECKS
from spark_audit.model import SNAPSHOT_SCHEMAS, snapshot_frames
from spark_audit.tenancy import build_tenancy
from tests.conftest import REPO_ROOT
from tests.tools.capacity import CAPACITY_YAML, PAYMENTS_CAPACITY, acme_with
from tests.tools.decided import decided, decided_example

AUDITS = REPO_ROOT / "audits"  # the checkout's: the fixtures are not shipped
ACME = REPO_ROOT / "examples" / "acme"  # the tenancy every estate is judged against, unless it names another
REPOS = ("acme", "acme-sized")  # acme-sized: payments' flow onprem -> cloud sized, its MM2 with quotas
OUTCOMES = ("passed", "failed")
KEYS = {"description", "snapshot", "partial", "findings", "repo"}
FINDING_KEYS = ("cluster", "resource_name", "principal")  # what a finding is about, as a fixture names it


@dataclass(frozen=True)
class Estate:
    check_id: str
    outcome: str
    path: Path
    tables: dict[str, list[tuple[Any, ...]]]
    partial: tuple[str, ...]
    findings: tuple[tuple[str, str, str], ...]  # (cluster, resource_name, principal) of each expected finding
    repo: str = "acme"  # the repo whose tenancy judges the estate (REPOS)

    @property
    def name(self) -> str:
        return self.path.relative_to(AUDITS).with_suffix("").as_posix()


def row(path: Path, table: str, values: Mapping[str, Any]) -> tuple[Any, ...]:
    """One snapshot row in its schema's column order; a nullable column may be left out (None)."""
    schema = SNAPSHOT_SCHEMAS[table]
    unknown = set(values) - set(schema.fieldNames())
    missing = {f.name for f in schema.fields if not f.nullable} - set(values)
    if unknown or missing:
        raise ValueError(f"{path}: {table} row {dict(values)}: unknown columns {sorted(unknown)}, "
                         f"missing {sorted(missing)}")
    return tuple(values.get(name) for name in schema.fieldNames())


def load_estate(path: Path) -> Estate:
    """An estate file, checked: a typo in a fixture is an error naming the file, never a vacuous pass."""
    outcome, check_id = path.parent.name, path.parent.parent.name.upper()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: {error}") from None
    if not isinstance(data, dict) or not {"description", "snapshot"} <= set(data) <= KEYS:
        raise ValueError(f"{path}: expected description, snapshot and optionally partial, findings, repo")
    if data.get("repo", "acme") not in REPOS:
        raise ValueError(f"{path}: repo is one of {', '.join(REPOS)}")
    if outcome not in OUTCOMES:
        raise ValueError(f"{path}: an estate is in passed/ or failed/, not {outcome}/")
    if not isinstance(data["description"], str) or not data["description"].strip():
        raise ValueError(f"{path}: description says why the estate passes or fails")
    snapshot = data["snapshot"]
    if not isinstance(snapshot, dict) or not snapshot or set(snapshot) - set(SNAPSHOT_SCHEMAS):
        raise ValueError(f"{path}: snapshot maps tables ({', '.join(SNAPSHOT_SCHEMAS)}) to rows")
    findings = data.get("findings") or []
    if (outcome == "failed") != bool(findings):
        raise ValueError(f"{path}: a failed estate lists its findings, a passed one none")
    if not all(isinstance(f, dict) and {"cluster", "resource_name"} <= set(f) <= set(FINDING_KEYS) for f in findings):
        raise ValueError(f"{path}: each finding is {{{', '.join(FINDING_KEYS)}}}, no principal: it names none")
    partial = data.get("partial") or []
    if not isinstance(partial, list) or not all(isinstance(entry, str) for entry in partial):
        raise ValueError(f"{path}: partial lists `<cluster>` or `<cluster>:<table>` entries")
    return Estate(check_id, outcome, path,
                  {table: [row(path, table, r) for r in rows] for table, rows in snapshot.items()}, tuple(partial),
                  tuple(sorted((f["cluster"], f["resource_name"], f.get("principal", "")) for f in findings)),
                  data.get("repo", "acme"))


def estates() -> list[Estate]:
    return [load_estate(path) for outcome in OUTCOMES for path in sorted(AUDITS.glob(f"*/{outcome}/*.yaml"))]


ESTATES = estates()


@pytest.fixture(scope="module")
def found(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[str, ...]]]:
    """Every estate through its check's detector: (check_id, cluster, resource_name, principal) of each finding,
    by estate. Concurrently: a Spark query on tiny data is mostly driver latency, which overlaps."""
    sized = decided(acme_with(tmp_path_factory.mktemp("acme-sized"), CAPACITY_YAML, PAYMENTS_CAPACITY))
    tenancies = {repo: build_tenancy(spark, resolved, inventory.clusters)
                 for repo, (inventory, resolved) in (("acme", decided_example(ACME)), ("acme-sized", sized))}

    def run(estate: Estate) -> list[tuple[str, ...]]:
        snapshot = snapshot_frames(spark, estate.tables, estate.partial)
        rows = CHECKS[estate.check_id].detect(snapshot, tenancies[estate.repo]).collect()
        return sorted((r.check_id, r.cluster, r.resource_name, r.principal) for r in rows)

    with ThreadPoolExecutor(4) as pool:
        return dict(zip([e.name for e in ESTATES], pool.map(run, ESTATES), strict=True))


@pytest.mark.parametrize("estate", ESTATES, ids=[e.name for e in ESTATES])
def test_estate(estate: Estate, found: dict[str, list[tuple[str, ...]]]) -> None:
    got = found[estate.name]
    assert {finding[0] for finding in got} <= {estate.check_id}
    assert [finding[1:] for finding in got] == list(estate.findings), json.dumps(got)


def test_every_detector_has_its_folder_and_every_folder_a_detector() -> None:
    """One-to-one: spark_audit/checks/<id>.py (CHECKS) and audits/<id>/ with its metadata and at least one
    passed and one failed estate, and nothing else in a check's folder."""
    modules = {m.name for m in pkgutil.iter_modules(spark_audit.checks.__path__)} - {"common"}
    assert modules == {check_id.lower() for check_id in CHECKS}, "a detector module not in CHECKS, or the reverse"
    assert all(check_id == module.CHECK_ID and module.__name__ == f"spark_audit.checks.{check_id.lower()}"
               for check_id, module in CHECKS.items())
    folders = {folder.name: folder for folder in check_folders(AUDITS)}
    assert set(folders) == {check_id.lower() for check_id in CHECKS}
    assert set(catalog(AUDITS)) == set(CHECKS) == set(catalog())
    for folder in folders.values():
        assert {p.name for p in folder.iterdir()} == {METADATA, *OUTCOMES}, folder
        for outcome in OUTCOMES:
            assert list((folder / outcome).glob("*.yaml")), f"{folder}/{outcome}/ has no estate"
            assert {p.suffix for p in (folder / outcome).iterdir()} == {".yaml"}, f"{folder}/{outcome}/"
    assert {(e.check_id, e.outcome) for e in ESTATES} == {(c, o) for c in CHECKS for o in OUTCOMES}


FAILED_TOPIC = "findings: [{cluster: c, resource_name: t}]\n"


@pytest.mark.parametrize(("outcome", "text", "error"), [
    ("failed", "snapshot: {topics: []}\n" + FAILED_TOPIC, "expected description"),
    ("failed", "description: x\nsnapshot: {topicz: []}\n" + FAILED_TOPIC, "maps tables"),
    ("failed", "description: x\nsnapshot: {topics: [{cluster: c, topic: t, extra: 1}]}\n" + FAILED_TOPIC,
     r"unknown columns \['extra'\]"),
    ("failed", "description: x\nsnapshot: {topics: [{cluster: c}]}\n" + FAILED_TOPIC, r"missing \['topic'\]"),
    ("failed", "description: x\nsnapshot: {topics: []}\n", "a failed estate lists its findings"),
    ("failed", "description: x\nsnapshot: {topics: []}\nfindings: [{cluster: c}]\n", "each finding"),
    ("failed", "description: x\nsnapshot: {topics: []}\nfindings: [{cluster: c, resource_name: t, tenant: x}]\n",
     "each finding"),
    ("failed", "description: x\nsnapshot: {topics: []}\npartial: cloud\n" + FAILED_TOPIC, "partial lists"),
    ("passed", "description: x\nsnapshot: {topics: []}\n" + FAILED_TOPIC, "a passed one none"),
    ("passed", "description: x\nsnapshot: {topics: [{cluster: c, topic: t}\n", "while parsing a flow"),
    ("flaky", "description: x\nsnapshot: {topics: []}\n", "in passed/ or failed/"),
    ("passed", "description: x\nsnapshot: {topics: []}\nrepo: examples/other\n", "repo is one of acme, acme-sized"),
], ids=["no-description", "unknown-table", "unknown-column", "missing-column", "failed-without-findings",
        "finding-without-resource", "finding-with-unknown-key", "partial-not-a-list", "passed-with-findings",
        "not-yaml", "neither-passed-nor-failed", "unknown-repo"])
def test_a_malformed_estate_is_an_error_naming_its_file(tmp_path: Path, outcome: str, text: str, error: str) -> None:
    path = tmp_path / "acl_stale" / outcome / "estate.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(ValueError, match=error) as raised:
        load_estate(path)
    assert str(path) in str(raised.value)


def test_a_well_formed_estate_loads_as_snapshot_rows(tmp_path: Path) -> None:
    path = tmp_path / "acl_stale" / "failed" / "estate.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("description: x\nsnapshot: {topics: [{cluster: c, topic: t}]}\npartial: [c]\n"
                    "findings: [{cluster: c, resource_name: u, principal: 'User:u'}, {cluster: c, resource_name: t}]\n")
    estate = load_estate(path)
    assert (estate.check_id, estate.outcome, estate.partial) == ("ACL_STALE", "failed", ("c",))
    assert estate.tables == {"topics": [("c", "t", None)]}  # schema order; a nullable column left out is None
    assert estate.findings == (("c", "t", ""), ("c", "u", "User:u"))
