"""Each built-in rule through the real OPA: examples/acme passes, examples/bad/<rule> trips it.

Every examples/bad/<rule>/expected.yaml lists the violations (rule, severity,
tenant, location) the repo must produce: its rule, and no other unless named
under `also` (a rule that necessarily fires on the same mistake).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from governance.config import load_inventory
from governance.policy.decide import decide
from tests.conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"
BAD = sorted(p for p in (EXAMPLES / "bad").iterdir() if p.is_dir())


def test_acme_passes_every_rule():
    decision = decide(load_inventory(EXAMPLES / "acme"))
    assert decision.violations == ()
    assert set(decision.scopes) == {"payments", "marketing", "risk", "logistics", "hr"}


def test_there_is_a_bad_example_for_every_builtin_rule():
    documented = set()
    for line in (REPO_ROOT / "docs" / "policies.md").read_text().splitlines():
        if line.startswith("| `") and "|" in line[3:]:
            documented.add(line.split("`")[1])
    assert documented == {p.name for p in BAD}


@pytest.mark.parametrize("example", BAD, ids=[p.name for p in BAD])
def test_bad_example_trips_exactly_its_rule(example: Path):
    document = yaml.safe_load((example / "expected.yaml").read_text())
    expected = document["violations"]
    decision = decide(load_inventory(example))
    found = [{"rule": v.rule, "severity": v.severity, "tenant": v.tenant, "location": v.location}
             for v in decision.violations]
    assert sorted(found, key=str) == sorted(expected, key=str)
    # `also`: rules that by design fire on the same repo (each documented in its expected.yaml)
    assert {v["rule"] for v in expected} - set(document.get("also", [])) == {example.name}
