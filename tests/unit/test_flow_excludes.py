"""A flow's own exclusions (`exclude_topics` / `exclude_groups`): validated as its patterns are, and compiled
after mm2gov's exclusions into MM2's `topics.exclude` / `groups.exclude` and Strimzi's exclude patterns."""

from __future__ import annotations

import shutil

import javaproperties
import pytest

from governance.compile.mm2 import GROUPS_EXCLUDE, TOPICS_EXCLUDE, flow_properties
from governance.compile.strimzi import mirror_maker
from governance.config import load_inventory
from governance.config.loader import InvalidConfig
from governance.config.schema import Cluster
from governance.model.tenancy import Flow
from tests.conftest import REPO_ROOT
from tests.tools.scopes import model_flow

CLUSTERS = {alias: Cluster.model_validate({
    "bootstrap_servers": f"{alias}:9093", "zone": alias, "strimzi": {"namespace": "kafka", "cluster": alias},
    "security": {"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "ca_secret": f"{alias}-ca"},
}) for alias in ("onprem", "cloud")}


def flow(**excludes: list[str]) -> Flow:
    return model_flow("payments", topics=["payments\\..*"], groups=["payments-.*"], **excludes)


def properties(item: Flow) -> dict[str, str]:
    return javaproperties.loads(flow_properties("payments", item, CLUSTERS, "/secrets", "# generated"))


def test_without_excludes_the_flow_is_as_before():
    props = properties(flow())
    assert props["onprem->cloud.topics.exclude"] == TOPICS_EXCLUDE
    assert "onprem->cloud.groups.exclude" not in props  # MM2's default, the same list GROUPS_EXCLUDE holds
    assert flow_properties("payments", flow(), CLUSTERS, "/s", "#") == flow_properties(
        "payments", flow(exclude_topics=[], exclude_groups=[]), CLUSTERS, "/s", "#")


def test_a_tenants_excludes_come_after_mm2govs_and_never_replace_them():
    props = properties(flow(exclude_topics=["payments\\.tmp.*", ".*"], exclude_groups=["payments-test.*"]))
    assert props["onprem->cloud.topics.exclude"] == f"{TOPICS_EXCLUDE},payments\\.tmp.*,.*"
    assert props["onprem->cloud.groups.exclude"] == f"{GROUPS_EXCLUDE},payments-test.*"


def test_strimzi_gets_the_same_exclude_patterns():
    mirror = mirror_maker("payments", flow(exclude_topics=["payments\\.tmp.*"], exclude_groups=["payments-x"]),
                          CLUSTERS, "4.1.0")["spec"]["mirrors"][0]
    assert mirror["topicsExcludePattern"] == f"{TOPICS_EXCLUDE},payments\\.tmp.*"
    assert mirror["groupsExcludePattern"] == f"{GROUPS_EXCLUDE},payments-x"
    plain = mirror_maker("payments", flow(), CLUSTERS, "4.1.0")["spec"]["mirrors"][0]
    assert plain["topicsExcludePattern"] == TOPICS_EXCLUDE and "groupsExcludePattern" not in plain


@pytest.mark.parametrize(("item", "why"), [
    ("logistics\\.(?i)x", "inline flags"),
    ("logistics\\.a,logistics\\.b", "comma"),
])
def test_an_exclude_outside_the_grammar_is_refused_with_its_place(tmp_path, item, why):
    repo = tmp_path / "repo"
    shutil.copytree(REPO_ROOT / "examples" / "acme", repo)
    tenant = repo / "tenants" / "logistics.yaml"
    tenant.write_text(tenant.read_text().replace(
        '    groups: ["logistics-.*"]\n', f'    groups: ["logistics-.*"]\n    exclude_topics: [\'{item}\']\n'))
    with pytest.raises(InvalidConfig) as invalid:
        load_inventory(repo)
    [problem] = [str(p) for p in invalid.value.problems]
    assert problem.startswith(f"tenants/logistics.yaml:14: flows[0].exclude_topics[0]: regex '{item}': "), (
        why, problem)
