"""Class 2 of issue 24 for every free-text field at once: no text a tenant writes reaches a generated file
except as data.

The fields are not listed here: they are read from `mm2gov schema`, every string the schema constrains by
neither a pattern nor an enum (owners, prefixes, regexes, the record marker, grants, a cluster's zone...),
so a field added later is covered without editing this test, and the test fails if the example repo has
no occurrence of it. Each field, in every place it occurs, is given hostile text (line breaks that would
start a YAML document, a properties key or a log4j2 appender, `${jndi:`, `#`, `: `, Unicode line breaks,
quotes, and a YAML 1.1 scalar that a pasted value would turn into a boolean). `generate` must then either
refuse the repo in one message with the contract's exit code, or write files that each parse back, YAML
and JSON by their parsers and every .properties file (MM2's and log4j2's) by java.util.Properties itself
(the Java oracle), with the same files, documents, keys and value types as the clean run.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from governance.config.schema import repo_json_schema
from tests.conftest import REPO_ROOT
from tests.tools.capacity import CAPACITY_YAML
from tests.tools.in_process import run_in_process
from tests.unit.test_generated_files import parsed as generated_files

pytestmark = [pytest.mark.integration,
              pytest.mark.usefixtures("decided_by_warm_opa")]  # its mm2gov runs ask one warm OPA (tests/conftest.py)

ACME = REPO_ROOT / "examples" / "acme"
FILES = {"CapacityFile": ["capacity.yaml"], "ClustersFile": ["clusters.yaml"],
         "Tenant": sorted(f"tenants/{p.name}" for p in (ACME / "tenants").iterdir())}
# examples/acme declares no exclusion and no capacity: the base repo adds one exclusion of each kind, a capacity.yaml
# (tests/tools/capacity.py) and a capacity on the flow, so those fields occur too and reach the MM2 files
EXCLUSIONS = {"tenants/payments.yaml": {"exclude_topics": ["payments\\.orders\\.tmp"],
                                        "exclude_groups": ["payments-tmp"],
                                        "capacity": {"bytes_per_second": 5000000, "catch_up_bytes_per_second": 25000000,
                                                     "source_partitions": 6}}}
LINES = "x\n---\nkind: Secret\nappender.evil.type = File\n#c\r\nk=v"
BREAKS = "a\u2028b\u0085c\u2029d\x0be"  # line breaks to YAML, Java or Unicode other than \\n
INLINE = " #${jndi:ldap://x/a}: 'q\" \\ {a: b} - [c] & *d !e % @f ` |g >h \u00e9\u2603"
PAYLOADS: dict[str, Callable[[str], str]] = {  # the field's value -> the hostile value
    "lines": lambda value: LINES,
    "breaks": lambda value: value + BREAKS,
    "inline": lambda value: value + INLINE,  # the value kept in front: allowed where only the value's start matters
    "yaml11": lambda value: "no",  # a pasted scalar would be the boolean false
}
Path_ = tuple[str, ...]


def free_text_fields(schema: dict[str, Any]) -> list[Path_]:
    """Every string the schema leaves free (no pattern, no enum, no const), as (file kind, key, ...) with
    `[]` for a list's items and `<key>` for a map's values."""
    defs, found = schema["$defs"], []

    def walk(node: dict[str, Any], path: Path_, seen: tuple[str, ...]) -> None:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[1]
            if name not in seen:
                walk(defs[name], path, (*seen, name))
            return
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key, ()):
                walk(sub, path, seen)
        for key, sub in node.get("properties", {}).items():
            walk(sub, (*path, key), seen)
        for sub in node.get("patternProperties", {}).values():
            walk(sub, (*path, "<key>"), seen)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], (*path, "<key>"), seen)
        if node.get("type") == "array":
            walk(node.get("items", {}), (*path, "[]"), seen)
        if node.get("type") == "string" and not {"pattern", "enum", "const"} & node.keys():
            found.append(path)

    for top in schema["oneOf"]:
        kind = top["$ref"].rsplit("/", 1)[1]
        walk(defs[kind], (kind,), (kind,))
    return sorted(set(found))


FIELDS = free_text_fields(repo_json_schema())


def places(data: Any, path: Path_) -> Iterator[tuple[Any, Any]]:
    """(container, key) of every occurrence of `path` (without its file kind) in `data`."""
    if not path:
        return
    head, rest = path[0], path[1:]
    if head == "[]":
        keys = range(len(data)) if isinstance(data, list) else ()
    elif head == "<key>":
        keys = list(data) if isinstance(data, dict) else ()
    else:
        keys = [head] if isinstance(data, dict) and head in data else ()
    for key in keys:
        if rest:
            yield from places(data[key], rest)
        elif isinstance(data[key], str):
            yield data, key


def base_repo(root: Path) -> dict[str, Any]:
    """examples/acme as data, with capacity.yaml and EXCLUSIONS on payments' first flow."""
    shutil.copytree(ACME, root)
    (root / "capacity.yaml").write_text(CAPACITY_YAML)
    files = {name: yaml.safe_load((root / name).read_text()) for names in FILES.values() for name in names}
    calibration = files["capacity.yaml"]["calibration"]
    calibration["measured_at"] = calibration["measured_at"].isoformat()  # text, as the field is written
    for name, extra in EXCLUSIONS.items():
        files[name]["flows"][0].update(json.loads(json.dumps(extra)))  # a copy: the tests change it
    return files


def write(root: Path, files: dict[str, Any]) -> None:
    for name, data in files.items():
        (root / name).write_text(yaml.safe_dump(data, allow_unicode=True))


def parsed(out: Path, java_oracle) -> dict[str, Any]:
    """Every generated file as data (test_generated_files.parsed); the .properties files as java.util.Properties
    itself reads them, in one pipelined round trip to the Java oracle."""
    def java(texts: dict[str, str]) -> dict[str, Any]:
        answers = java_oracle.requests({"op": "properties", "text": text, "as": "file"} for text in texts.values())
        return dict(zip(texts, (answer["properties"] for answer in answers), strict=True))

    return generated_files(out, java)


def skeleton(data: Any, marks: set[str]) -> Any:
    """The shape of the data: maps with their keys, lists with their length, each value's type. A pasted
    value would add a key, a document or a list item, or turn a string into a boolean or null. A key that is
    the field's value (a map keyed by it) is `<field>` in both runs."""
    if isinstance(data, dict):
        return {("<field>" if k in marks else k): skeleton(v, marks) for k, v in data.items()}
    if isinstance(data, list):
        return [skeleton(v, marks) for v in data]
    return type(data).__name__


@pytest.fixture(scope="module")
def clean(tmp_path_factory, java_oracle) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("free-text-clean")
    files = base_repo(root / "repo")
    write(root / "repo", files)
    done = run_in_process("generate", str(root / "repo"), "--out", str(root / "out"))
    assert done.returncode == 0, done.stderr
    return {"files": files, "out": parsed(root / "out", java_oracle)}


def test_the_schema_has_free_text_fields_and_the_base_repo_has_each():
    """The walk finds the fields (not vacuous), and every one of them occurs in the base repo, so each is
    exercised below; a new free-text field needs an occurrence in examples/acme (or EXCLUSIONS)."""
    assert {("Tenant", "owners", "[]"), ("Tenant", "record_marker", "value"),
            ("ClustersFile", "clusters", "<key>", "zone")} <= set(FIELDS)
    files = base_repo(Path(__import__("tempfile").mkdtemp()) / "repo")
    missing = [f for f in FIELDS if not any(list(places(files[name], f[1:])) for name in FILES[f[0]])]
    assert missing == []


@dataclass(frozen=True)
class Run:
    """`generate` on the base repo with one field (everywhere it occurs) given one payload."""

    done: subprocess.CompletedProcess[str]
    out: Path
    originals: frozenset[str]
    hostile: frozenset[str]


@pytest.fixture(scope="module")
def runs(clean, tmp_path_factory) -> dict[tuple[Path_, str], Run]:
    """Every (field, payload) generated once, for the per-case checks and for the check that they were not
    vacuous, which then pass in any order."""
    found = {}
    for field in FIELDS:
        for payload in sorted(PAYLOADS):
            files = json.loads(json.dumps(clean["files"]))
            originals, hostile = set(), set()
            for name in FILES[field[0]]:
                for container, key in places(files[name], field[1:]):
                    originals.add(container[key])
                    container[key] = PAYLOADS[payload](container[key])
                    hostile.add(container[key])
            root = tmp_path_factory.mktemp("free-text")
            shutil.copytree(ACME, root / "repo")
            write(root / "repo", files)
            done = run_in_process("generate", str(root / "repo"), "--out", str(root / "out"))
            found[field, payload] = Run(done, root / "out", frozenset(originals), frozenset(hostile))
    return found


@pytest.mark.parametrize("payload", sorted(PAYLOADS))
@pytest.mark.parametrize("field", FIELDS, ids=["/".join(f) for f in FIELDS])
def test_hostile_text_in_a_free_text_field_reaches_files_only_as_data(clean, runs, java_oracle, field, payload):
    run = runs[field, payload]
    assert run.originals, f"no occurrence of {field}"
    if run.done.returncode != 0:  # refused: one message, the contract's code, no traceback, no output written
        assert run.done.returncode in (1, 2), run.done.stderr
        assert "Traceback" not in run.done.stderr and run.done.stderr.strip(), run.done.stderr
        assert not run.out.exists() or not any(run.out.rglob("*.yaml"))
        return
    out = parsed(run.out, java_oracle)
    assert set(out) == set(clean["out"]), set(out) ^ set(clean["out"])
    for name, data in out.items():
        if isinstance(data, str):
            continue
        assert skeleton(data, set(run.hostile)) == skeleton(clean["out"][name], set(run.originals)), name
    for path in run.out.rglob("*"):
        if path.is_file():
            written = path.read_text(encoding="utf-8")
            assert not re.search(r"^(kind: Secret|appender\.evil|---\nkind)", written, re.MULTILINE), path
            assert not set("\u2028\u2029\u0085\x0b") & set(written), path  # escaped, never raw
            if "logging" in path.parts:  # log4j2: no lookup but mm2gov's own log folder
                lookups = set(re.findall(r"\$\{[^}]*\}", json.dumps(out[path.relative_to(run.out).as_posix()])))
                assert lookups <= {"${sys:mm2gov.log.dir:-/var/log/mm2gov}"}, path


def test_the_hostile_texts_mostly_reached_the_files(runs):
    """Most fields accepted some hostile text and generated, so the checks above looked at files, not only at
    refusals."""
    generated = {field for (field, _), run in runs.items() if run.done.returncode == 0}
    assert len(generated) >= len(FIELDS) // 2, sorted(generated)
