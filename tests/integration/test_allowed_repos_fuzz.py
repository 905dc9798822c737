"""Property: whatever repo the policy ALLOWS, the MirrorMaker 2 it compiles to replicates only
each tenant's own names, as Kafka's own code (the Java oracle) reads the generated file.

Repos are random: tenant and cluster names (hyphens included, so derived names are tested
for collisions), topic prefixes, and flow regexes built from the allowed grammar behind the
tenant's prefix, with hostile tails (alternations, wildcards, other tenants' names) mixed in.
Whatever the real OPA lets through is generated and asked of Java; what it refuses is counted.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.compile.desired import compile_desired
from governance.config import load_inventory
from governance.errors import ConfigError
from governance.policy.decide import PolicySession
from tests.unit.test_regex import patterns

pytestmark = pytest.mark.integration

LABEL = st.from_regex(r"\A[a-z]([a-z0-9-]{0,6}[a-z0-9])?\Z", fullmatch=True)
TAILS = st.one_of(patterns(), st.sampled_from([".*", "x|.*", "(x|y)", "a|b\\..*", "[a-z]+", "x$|z"]))
SEEN = {"allowed": 0, "refused": 0, "invalid": 0}


@pytest.fixture(scope="module")
def opa():
    with PolicySession() as session:
        yield session


@st.composite
def repos(draw):
    clusters = draw(st.lists(LABEL, min_size=2, max_size=3, unique=True))
    tenants = draw(st.lists(LABEL, min_size=2, max_size=3, unique=True))
    files = {"clusters.yaml": "clusters:\n" + "".join(
        f"  {c}:\n    bootstrap_servers: \"{c}.example:9093\"\n    zone: onprem\n"
        f"    security: {{protocol: SASL_SSL, sasl_mechanism: SCRAM-SHA-512}}\n" for c in clusters)}
    for name in tenants:
        prefix = f"{name}."
        topics = []
        for _ in range(draw(st.integers(1, 3))):
            tail = draw(TAILS)
            wrap = draw(st.sampled_from(["{p}{t}", "{p}{t}", "{p}{t}", "{p}({t})", "{p}({t})", "^{p}{t}$", "{t}"]))
            topics.append(wrap.format(p=re.escape(prefix), t=tail))
        source, target = draw(st.permutations(clusters))[:2]
        files[f"tenants/{name}.yaml"] = (
            f"name: {name}\nowners: [o@example.com]\nclassification: internal\n"
            f"topic_prefixes: [\"{prefix}\"]\ngroup_prefixes: [\"{name}-\"]\n"
            f"principals:\n  - {{name: \"User:{name}-app\", access: [read, write]}}\n"
            f"flows:\n  - source: {source}\n    target: {target}\n"
            f"    topics: {json.dumps(topics)}\n    groups: [\"{re.escape(name)}-.*\"]\n")
    return files


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(files=repos())
def test_what_the_policy_allows_replicates_only_the_tenants_own_names(opa, java_oracle, files):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for relative, text in files.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text(text)
        try:
            inventory = load_inventory(root)
        except ConfigError:
            SEEN["invalid"] += 1  # outside the grammar: refused before any policy runs
            return
        decision = opa.decide(inventory)
        if decision.at_or_above("high"):
            SEEN["refused"] += 1
            return
        SEEN["allowed"] += 1
        state = compile_desired(inventory, decision)
    names = []
    for tenant in inventory.tenants.values():
        stem = tenant.topic_prefixes[0]
        names += [stem + "x", stem + "a", stem + "b.c", stem + "y", stem + "zz", stem[:-1], stem[:-1] + "-x"]
    names += ["x", "a", "b.c", "heartbeats", "__consumer_offsets"]
    assert len({f.flow_id for f in state.flows}) == len(state.flows)
    for flow in state.flows:
        tenant = inventory.tenants[flow.tenant]
        groups = [n.replace(".", "-") for n in names]
        [pair] = java_oracle.mm2(flow.properties, topics=names, groups=groups).enabled_pairs
        assert all(t.startswith(tuple(tenant.topic_prefixes)) for t in pair.topics or ()), (files, pair.topics)
        assert all(g.startswith(tuple(tenant.group_prefixes)) for g in pair.groups or ()), (files, pair.groups)


def test_the_fuzz_saw_both_outcomes():
    """Runs after the property (file order): it must have generated allowed and refused repos."""
    print(f"allowed repos checked against Java: {SEEN['allowed']}, refused by the policy: {SEEN['refused']}, "
          f"invalid: {SEEN['invalid']}")
    assert SEEN["allowed"] >= 10 and SEEN["refused"] >= 10, SEEN
