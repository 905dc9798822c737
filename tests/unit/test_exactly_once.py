"""`delivery: exactly_once` per flow: the schema's default, the KIP-618 keys compile writes, the
transactional-id grants acls.mm2_scope gives, and at_least_once flows left exactly as they were."""

from __future__ import annotations

import shutil

import javaproperties
import pytest
from pydantic import ValidationError

from governance.compile.acls import mm2_bindings, mm2_scope
from governance.compile.mm2 import compile_flows, flow_properties
from governance.config.schema import Cluster, Flow
from governance.model.acl import AclBinding
from governance.model.names import flow_id, mm2_principal
from governance.model.tenancy import Flow as ResolvedFlow
from governance.model.tenancy import Tenancy
from tests.conftest import REPO_ROOT
from tests.tools.decided import decided
from tests.tools.scopes import model_flow, tenancy, tenant_scope

ACME = REPO_ROOT / "examples" / "acme"

CLUSTERS = {alias: Cluster.model_validate({
    "bootstrap_servers": f"{alias}:9093", "zone": alias,
    "security": {"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "ca_secret": f"{alias}-ca"},
}) for alias in ("onprem", "cloud")}
FLOW = flow_id("payments", "onprem", "cloud")
KIP_618_KEYS = {"cloud.exactly.once.source.support", "onprem.consumer.isolation.level",
                "dedicated.mode.enable.internal.rest", "listeners", "cloud.scheduled.rebalance.max.delay.ms",
                # what exactly-once costs, bought back (docs/generate-apply.md, "What it costs")
                "onprem->cloud.transaction.boundary", "cloud.producer.batch.size", "onprem.consumer.max.poll.records"}


def flow(delivery: str) -> ResolvedFlow:
    return model_flow("payments", topics=["payments\\..*"], groups=["payments-.*"], delivery=delivery)


def properties(delivery: str) -> dict[str, str]:
    return javaproperties.loads(flow_properties("payments", flow(delivery), CLUSTERS, "/secrets", "# generated"))


def scopes(delivery: str) -> Tenancy:
    return tenancy(tenant_scope("payments", groups=["payments-"], flows=[flow(delivery).model_dump()]))


def test_at_least_once_is_the_default_and_nothing_else_is_accepted():
    base = {"source": "onprem", "target": "cloud", "topics": ["payments\\..*"]}
    assert Flow.model_validate(base).delivery == "at_least_once"
    assert Flow.model_validate({**base, "delivery": "exactly_once"}).delivery == "exactly_once"
    for wrong in ("exactly-once", "EXACTLY_ONCE", True):
        with pytest.raises(ValidationError):
            Flow.model_validate({**base, "delivery": wrong})


def test_exactly_once_flows_get_the_kip_618_keys():
    props = properties("exactly_once")
    assert {key: props[key] for key in KIP_618_KEYS} == {
        "cloud.exactly.once.source.support": "enabled", "onprem.consumer.isolation.level": "read_committed",
        "dedicated.mode.enable.internal.rest": "true", "listeners": "http://127.0.0.1:0",
        "cloud.scheduled.rebalance.max.delay.ms": "10000",
        "onprem->cloud.transaction.boundary": "poll", "cloud.producer.batch.size": "262144",
        "onprem.consumer.max.poll.records": "5000"}
    assert set(properties("exactly_once")) - set(properties("at_least_once")) == KIP_618_KEYS


def test_at_least_once_flows_are_byte_identical_to_flows_without_delivery(tmp_path):
    """A flow without `delivery` and one with `delivery: at_least_once`, through the real policy decision:
    the same generated file, with none of KIP-618's keys."""
    generated = []
    for delivery in ("", "    delivery: at_least_once\n"):
        repo = tmp_path / f"acme{len(generated)}"
        shutil.copytree(ACME, repo)
        payments = repo / "tenants" / "payments.yaml"
        payments.write_text(payments.read_text().replace("    replication_policy: default\n",
                                                          f"    replication_policy: default\n{delivery}", 1))
        inventory, resolved = decided(repo)
        generated.append(compile_flows(resolved, inventory.clusters, "/secrets", "# generated"))
    assert generated[0] == generated[1]
    assert not any(KIP_618_KEYS & set(javaproperties.loads(f.properties)) for f in generated[0])


def test_only_exactly_once_flows_get_transactional_ids_their_own_only():
    args = ("onprem", "cloud", FLOW, ["payments."], ["payments-"], ["onprem.payments."])
    assert mm2_scope(*args, exactly_once=True)[:-1] == mm2_scope(*args)
    assert mm2_scope(*args, exactly_once=True)[-1] == (
        "cloud", "TRANSACTIONAL_ID", [f"mm2gov.{FLOW}.connect-", f"connect-cluster-mm2gov.{FLOW}.connect"],
        ["WRITE", "DESCRIBE"])
    principal = mm2_principal(FLOW)
    granted = mm2_bindings(scopes("exactly_once"))
    transactional = {b for bindings in granted.values() for b in bindings if b.resource_type == "TRANSACTIONAL_ID"}
    assert transactional == {
        AclBinding(principal, "TRANSACTIONAL_ID", f"mm2gov.{FLOW}.connect-", "PREFIXED", "WRITE"),
        AclBinding(principal, "TRANSACTIONAL_ID", f"mm2gov.{FLOW}.connect-", "PREFIXED", "DESCRIBE"),
        AclBinding(principal, "TRANSACTIONAL_ID", f"connect-cluster-mm2gov.{FLOW}.connect", "LITERAL", "WRITE"),
        AclBinding(principal, "TRANSACTIONAL_ID", f"connect-cluster-mm2gov.{FLOW}.connect", "LITERAL", "DESCRIBE"),
    }
    assert transactional <= granted["cloud"]
    assert not any(b.resource_type == "CLUSTER" for bindings in granted.values() for b in bindings)
    assert granted["cloud"] - transactional == mm2_bindings(scopes("at_least_once"))["cloud"]
