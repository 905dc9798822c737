"""The one YAML dumper (governance.files.YAML_DUMPER) writes what PyYAML's safe dumper writes, byte for byte:
its fast representer builds the same nodes, tags, styles and anchors; `indented_json` writes what
`json.dumps(indent=...)` writes."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from governance.files import YAML_DUMPER, indented_json

SAFE_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # the same emitter, PyYAML's own representer
SHARED = [{"severity": "critical", "tenant": "t1"}]
TRICKY = ["", "yes", "no", "on", "null", "~", "true", "0123", "1e3", "0x1f", "1_000", ".inf", "-.inf", ".nan",
          "12:30", "2026-11-27", "- dash", "key: value", "# hash", "a\nb", " lead", "trail ", "'quoted'",
          '"double"', "[flow]", "{map}", "*alias", "&anchor", "!tag", "%pct", "@at", "`tick", "é ü 中文", "\t",
          "=", "<<", "x" * 200]

DOCUMENTS: list[Any] = [
    {"groups": [{"name": "g", "rules": [{"alert": "A", "for": "2m", "labels": {"tenant": "0123"}}]}]},
    {"tests": [{"exp_alerts": SHARED}, {"exp_alerts": SHARED}, {"exp_alerts": []}, {"exp_alerts": []}]},
    {"scalars": [True, False, None, 0, -7, 10**30, 1.5, 1e17, float("inf"), -float("inf"), float("nan")]},
    {"tricky": TRICKY, **{text: text for text in TRICKY}},
    {"z": 1, "a": {"y": [], "b": {}}, 3: "int key", None: "none key"},
    [[1, [2, [3, []]]], {}, [{}], ("tuple", 1)],
    "a plain string",
    42,
    None,
]


@pytest.mark.parametrize("document", DOCUMENTS)
@pytest.mark.parametrize("options", [{"sort_keys": False}, {"sort_keys": False, "allow_unicode": True}, {},
                                     {"default_flow_style": None}, {"default_style": '"'}])
def test_same_bytes_as_the_safe_dumper(document: Any, options: dict[str, Any]) -> None:
    assert yaml.dump(document, Dumper=YAML_DUMPER, **options) == yaml.dump(document, Dumper=SAFE_DUMPER, **options)


def test_same_bytes_for_several_documents_and_a_dumper_used_twice() -> None:
    documents = [{"a": SHARED}, {"b": SHARED, "c": SHARED}]
    assert (yaml.dump_all(documents, Dumper=YAML_DUMPER, sort_keys=False)
            == yaml.dump_all(documents, Dumper=SAFE_DUMPER, sort_keys=False))
    assert "&id001" in yaml.dump(documents[1], Dumper=YAML_DUMPER, sort_keys=False)  # one list met twice: an alias


def test_types_it_cannot_represent_are_refused_as_before() -> None:
    with pytest.raises(yaml.representer.RepresenterError):
        yaml.dump({"x": object()}, Dumper=YAML_DUMPER)


JSON_VALUES: list[Any] = [
    {"title": "MirrorMaker 2 — t1", "panels": [{"id": 1, "gridPos": {"h": 8, "w": 12}, "targets": []}], "links": {}},
    [1, -2, 10**30, 0.1, 1e17, 1e-7, -0.0, True, False, None, "", "é\n\t\"\\/\u2028\x00", [], {}, [[[]]]],
    {"nan": float("nan"), "inf": float("inf"), "-inf": -float("inf")},  # json's NaN/Infinity, by json itself
    {1: "int key", None: "none key", False: "bool key"},  # keys json turns into strings, by json itself
    {"tuple": (1, 2)},
    "a string",
    3.25,
    None,
]


@pytest.mark.parametrize("value", JSON_VALUES)
@pytest.mark.parametrize("indent", [1, 2])
def test_indented_json_is_json_dumps(value: Any, indent: int) -> None:
    assert indented_json(value, indent) == json.dumps(value, indent=indent, ensure_ascii=False)
