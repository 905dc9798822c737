"""The resolved tenancy (governance/model/tenancy.py): parsed once from OPA's decision, strictly.

The decision of examples/acme (the real OPA) parses, loses nothing (it serialises back to the same scopes),
and offers names.py's names; every mutation of that decision's shape (a key dropped, a key added, a value of
another type), drawn by hypothesis from the valid decision, is refused, and `parse_decision` turns the
refusal into the deny answer (PolicyError), never a default.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.model import names
from governance.model.tenancy import MalformedDecision, parse_tenancy
from governance.policy.engine import PolicyError, parse_decision
from tests.conftest import REPO_ROOT
from tests.tools.decided import decided_example

ACME = REPO_ROOT / "examples" / "acme"


@pytest.fixture(scope="module")
def scopes() -> dict[str, Any]:
    from governance.policy.decide import decide

    inventory, _ = decided_example(ACME)
    return decide(inventory).scopes


def test_acmes_decision_parses_and_serialises_back_to_itself(scopes):
    tenancy = parse_tenancy(scopes)
    assert list(tenancy.tenants) == list(scopes) and len(tenancy) == 5
    back = {name: tenant.model_dump(by_alias=True, mode="json") for name, tenant in tenancy.tenants.items()}
    assert back == scopes  # every field the policy decided is in the model, nothing added


def test_the_model_offers_names_pys_names(scopes):
    tenancy = parse_tenancy(scopes)
    flows = {flow.id: (tenant.tenant, flow) for tenant, flow in tenancy.flows()}
    assert set(flows) == {"payments-onprem-to-cloud", "payments-onprem-to-onprem-dr", "marketing-onprem-to-cloud",
                          "logistics-onprem-to-cloud", "risk-onprem-to-onprem-dr"}
    for fid, (_, flow) in flows.items():
        assert flow.mm2_principal == names.mm2_principal(fid) and flow.internal_prefix == names.mm2_internal_prefix(fid)
        assert flow.mm2_topics == names.mm2_flow_topics(fid) and flow.connect == names.connect_names(fid)
        assert flow.transactional_ids == names.mm2_transactional_ids(fid)
        assert flow.remote_name("x.y") == names.remote_name(flow.replication_policy, flow.source, "x.y")
    owners = tenancy.principal_owners()
    assert owners["User:payments-analytics"] == "payments" and owners[names.mm2_principal(fid)] == flows[fid][0]
    assert set(owners) == {p["name"] for s in scopes.values() for p in s["principals"]} | {
        names.mm2_principal(f["id"]) for s in scopes.values() for f in s["flows"]}  # acme has no slo: no probe
    payments = tenancy.tenants["payments"]
    assert payments.namespace == "payments" and payments.record_marker.value == "payments"
    assert [g.to for g in payments.grants_given] == ["marketing"]
    assert [g.from_ for g in tenancy.tenants["marketing"].grants_received] == ["payments"]


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    """Every location in the JSON tree (a dict key or a list index), with the root's tenants' keys."""
    found = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        found.append((*path, key))
        found += _paths(value, (*path, key))
    return found


def _wrong(value: Any) -> Any:
    """A value of another JSON type than `value`: never what the model accepts in its place."""
    if isinstance(value, bool) or value is None:
        return "yes"
    if isinstance(value, str):
        return 1
    if isinstance(value, int | float):
        return "1"
    if isinstance(value, list):
        return "a list"
    return ["a", "dict"]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_every_mutation_of_a_valid_decision_is_refused_and_denies(scopes, data):
    mutated = copy.deepcopy(scopes)
    paths = [p for p in _paths(mutated) if len(p) > 1]  # inside a tenant's scope
    path = data.draw(st.sampled_from(paths))
    parent = mutated
    for key in path[:-1]:
        parent = parent[key]
    kind = data.draw(st.sampled_from(["drop", "add", "retype"]))
    if kind == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
    elif kind == "add" and isinstance(parent, dict):
        parent["unexpected"] = parent[path[-1]]
    else:
        parent[path[-1]] = _wrong(parent[path[-1]])
    with pytest.raises(MalformedDecision):
        parse_tenancy(mutated)
    with pytest.raises(PolicyError, match=r"malformed scope.*denying"):
        parse_decision({"scopes": mutated, "violations": []})


@pytest.mark.parametrize("scopes_value", [None, [], "scopes", {"payments": None}, {"payments": []}])
def test_a_decision_that_is_not_scopes_at_all_is_refused(scopes_value):
    with pytest.raises(MalformedDecision):
        parse_tenancy(scopes_value)
    with pytest.raises(PolicyError, match="denying"):
        parse_decision({"scopes": scopes_value, "violations": []})


def test_a_scope_filed_under_another_tenants_name_is_refused(scopes):
    swapped = {"marketing": scopes["payments"], "payments": scopes["marketing"]}
    with pytest.raises(MalformedDecision, match="is named"):
        parse_tenancy(swapped)
