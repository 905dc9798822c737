"""The probe in the tenancy model (issue 17): an `slo` flow replicates its tenant's probe topic (one exact
topics item, inside the tenant's first prefix), the tenant's probe principal gets LITERAL ACLs on the probe
topics only, a SCRAM user and Secrets like any managed user; the real OPA admits the generated objects and
refuses anything wider; the audit's tenancy knows the probe as the tenant's. Flows without `slo` compile as
before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import javaproperties
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.admission.decider import AdmissionDecider
from governance.admission.envelope import parse_review
from governance.compile.desired import DesiredState, compile_desired
from governance.config import load_inventory
from governance.config.regex import Alternative, analyse, java_list_matcher
from governance.errors import ConfigError
from governance.model.acl import AclBinding
from governance.model.names import (
    RESERVED_USERS,
    literal_regex,
    probe_principal,
    probe_topic,
    probe_user,
    reserved_topics,
)
from governance.policy.bundle import builtin_modules
from governance.policy.decide import decide
from governance.policy.engine import Decision
from governance.policy.opa import OpaEngine
from tests.conftest import REPO_ROOT
from tests.tools.namespaces import StaticNamespaces

PROBE = "User:mm2gov-probe-payments"
SLO = {"latency_p99_ms": 5000}

# Prefixes as tenants may declare them for a probe (schema.PROBE_PREFIX), ending with a separator (policy).
prefixes = st.builds(lambda body, sep: body + sep, st.text("abcxyz019._-", max_size=12), st.sampled_from(".-_"))


@given(prefixes, prefixes)
@settings(max_examples=300, deadline=None)
def test_the_probe_topic_item_matches_only_the_probe_topic_inside_the_first_prefix(own: str, other: str):
    topic = probe_topic([own, other])
    item = literal_regex(topic)
    assert topic.startswith(own)
    assert analyse(item).alternatives == (Alternative(topic, True),)  # one exact name, no comma: one LIST item
    matches = java_list_matcher([item])
    assert matches(topic) and not matches(topic + "x") and not matches(topic[:-1])
    # a tenant whose prefix does not overlap the owner's cannot own the probe topic
    if not (own.startswith(other) or other.startswith(own)):
        assert not topic.startswith(other)


def test_the_probe_user_is_reserved_and_its_topic_is_not():
    assert any(probe_user("payments").startswith(r.text) for r in RESERVED_USERS if r.prefix)
    assert probe_principal("pay-eu") == "User:mm2gov-probe-pay-eu"
    assert not any(probe_topic(["payments."]).startswith(r.text) if r.prefix else probe_topic(["payments."]) == r.text
                   for r in reserved_topics(["onprem", "cloud"]))


def _repo(tmp_path: Path, flow_changes: dict[str, Any] | None = None, tenant_changes: dict[str, Any] | None = None,
          name: str = "payments") -> Path:
    root = tmp_path / "acme"
    shutil.copytree(REPO_ROOT / "examples" / "acme", root)
    path = root / "tenants" / f"{name}.yaml"
    tenant = yaml.safe_load(path.read_text())
    if flow_changes is not None:
        tenant["flows"][0].update(flow_changes)
    tenant.update(tenant_changes or {})
    path.write_text(yaml.safe_dump(tenant))
    return root


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> tuple[Path, Decision, DesiredState]:
    root = _repo(tmp_path_factory.mktemp("slo"), {"slo": SLO})
    inventory = load_inventory(root)
    decision = decide(inventory)
    return root, decision, compile_desired(inventory, decision)


def test_an_slo_flow_replicates_the_probe_topic_and_nothing_else_changes(compiled, tmp_path):
    _, decision, state = compiled
    assert not decision.at_or_above("high")
    plain_inventory = load_inventory(REPO_ROOT / "examples" / "acme")
    plain = compile_desired(plain_inventory, decide(plain_inventory))
    flows = {f.flow_id: f for f in state.flows}
    for before in plain.flows:
        after = flows[before.flow_id].properties
        if before.flow_id != "payments-onprem-to-cloud":
            assert after.splitlines()[1:] == before.properties.splitlines()[1:]  # line 0 names the repo dir
            continue
        old, new = javaproperties.loads(before.properties), javaproperties.loads(after)
        assert {k for k in new if new[k] != old.get(k)} == {"onprem->cloud.topics"}
        assert new["onprem->cloud.topics"] == old["onprem->cloud.topics"] + ",payments\\.mm2gov\\-probe"
    mirror = next(o for o in state.strimzi if o["kind"] == "KafkaMirrorMaker2"
                  and o["metadata"]["name"].startswith("payments-onprem-to-cloud"))
    assert mirror["spec"]["mirrors"][0]["topicsPattern"].endswith(",payments\\.mm2gov\\-probe")
    assert "mm2gov-probe" not in json.dumps([plain.strimzi, sorted(map(str, plain.bindings.items()))])


def test_the_probe_principal_has_literal_acls_on_the_probe_topics_only(compiled):
    _, _, state = compiled
    found = {(cluster, b) for cluster, items in state.bindings.items() for b in items if b.principal == PROBE}
    assert found == {
        *(("onprem", AclBinding(PROBE, "TOPIC", "payments.mm2gov-probe", "LITERAL", op))
          for op in ("CREATE", "WRITE", "DESCRIBE")),
        *(("cloud", AclBinding(PROBE, "TOPIC", "onprem.payments.mm2gov-probe", "LITERAL", op))
          for op in ("READ", "DESCRIBE")),
    }
    assert state.principal_tenants[PROBE] == "payments"
    assert {cluster for cluster, users in state.scram_users().items() if PROBE in users} == {"onprem", "cloud"}
    users = [o for o in state.strimzi if o["kind"] == "KafkaUser" and o["metadata"]["name"] == "mm2gov-probe-payments"]
    assert {u["metadata"]["labels"]["mm2gov.io/tenant"] for u in users} == {"payments"} and len(users) == 2


def _review(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    api, version = obj["apiVersion"].split("/")
    body = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "u-1", "kind": {"group": api, "version": version, "kind": obj["kind"]}, "operation": "CREATE",
        "namespace": namespace, "name": obj["metadata"]["name"], "object": obj}}
    return parse_review(json.dumps(body).encode())


def test_the_real_opa_admits_the_generated_probe_objects_and_nothing_wider(compiled):
    root, _, state = compiled
    mine = [o for o in state.strimzi if o["metadata"]["name"].startswith(("mm2gov-probe-payments",
                                                                          "payments-onprem-to-cloud"))]
    namespaces = StaticNamespaces({o["metadata"]["namespace"]: {} for o in state.strimzi})
    with OpaEngine(builtin_modules()) as engine:
        decider = AdmissionDecider(root, engine.url, namespaces)
        assert decider.sync.load()

        def verdict(obj: dict[str, Any]) -> tuple[bool, set[str]]:
            found = decider.decide(_review(obj, obj["metadata"]["namespace"]))
            return found.allowed, {v["rule"] for v in found.violations}

        assert len(mine) == 3 and all(verdict(o) == (True, set()) for o in mine)
        mirror = next(o for o in mine if o["kind"] == "KafkaMirrorMaker2")
        wider = json.loads(json.dumps(mirror))
        wider["spec"]["mirrors"][0]["topicsPattern"] += ",marketing\\.mm2gov\\-probe"
        assert verdict(wider) == (False, {"admission_mm2_topics_outside_scope"})
        user = next(o for o in mine if o["kind"] == "KafkaUser")
        prefixed = json.loads(json.dumps(user))
        prefixed["spec"]["authorization"]["acls"][0]["resource"]["patternType"] = "prefix"
        assert verdict(prefixed) == (False, {"admission_user_acl_operation"})
        grouped = json.loads(json.dumps(user))
        grouped["spec"]["authorization"]["acls"].append(
            {"resource": {"type": "group", "name": "payments-", "patternType": "prefix"}, "operations": ["Read"],
             "host": "*"})
        assert verdict(grouped) == (False, {"admission_user_acl_operation"})
        decider.stop()


def test_no_tenant_may_declare_a_probe_user(tmp_path):
    root = _repo(tmp_path, tenant_changes={"principals": [{"name": PROBE.replace("payments", "marketing"),
                                                           "access": ["read"]}]}, name="marketing")
    rules = {v.rule for v in decide(load_inventory(root)).violations}
    assert any("reserved" in rule for rule in rules), rules


@pytest.mark.parametrize(("slo", "problem"), [
    ({}, "latency_p99_ms"),
    ({"latency_p99_ms": 0}, "greater than 0"),
    ({"latency_p99_ms": 100, "max_lost": -1}, "greater than or equal to 0"),
    ({"latency_p99_ms": 100, "p50": 3}, "p50"),
    ({"latency_p99_ms": "100"}, "valid integer"),
])
def test_a_bad_slo_names_the_key(tmp_path, slo, problem):
    with pytest.raises(ConfigError) as raised:
        load_inventory(_repo(tmp_path, {"slo": slo}))
    assert "tenants/payments.yaml" in str(raised.value) and problem in str(raised.value)


def test_an_slo_needs_a_first_prefix_that_can_name_a_topic(tmp_path):
    """Any topic prefix is a topic name's start (schema.TopicPrefix); with an slo the first one must also
    leave room for the probe topic's name within Kafka's 249 characters."""
    long_prefix = "p" * 240 + "."  # a topic prefix (241 <= 249), but 241 + len("mm2gov-probe") > 249
    root = _repo(tmp_path, {"slo": SLO}, {"topic_prefixes": [long_prefix, "payments."]})
    with pytest.raises(ConfigError, match="names the probe topic and must be a Kafka topic name"):
        load_inventory(root)
    load_inventory(_repo(tmp_path / "without", {}, {"topic_prefixes": [long_prefix, "payments."]}))


def test_the_audit_knows_the_probe_as_the_tenants(compiled):
    from spark_audit.tenancy import tenancy_rows
    from tests.tools.decided import decided

    root, _, _ = compiled
    inventory, tenancy = decided(root)
    rows = tenancy_rows(tenancy, inventory.clusters)
    assert [r for r in rows["principals"] if r.principal == PROBE] == [("payments", PROBE, "probe", None, ())]
    flow = next(r for r in rows["flows"] if r.flow_id == "payments-onprem-to-cloud")
    assert flow.topics[-1] == "payments\\.mm2gov\\-probe"
