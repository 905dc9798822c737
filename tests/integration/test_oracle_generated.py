"""What MirrorMaker 2 reads from what mm2gov writes, asked of Kafka's own code (the Java oracle).

mm2gov's policy claims each flow replicates only its tenant's names; Java's
`Utils.loadProps`, `MirrorMakerConfig` and MM2's topic and group filters are
asked which names the generated files actually replicate, over every tenant's
names plus near-misses. The regex grammar is checked the same way: Python's
analysis of an allowed pattern must hold for Java's matching.
"""

from __future__ import annotations

import re
import shutil

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from governance.config import load_inventory
from governance.config.regex import analyse
from governance.model.names import REPLICATION_POLICY_CLASSES, flow_id, mm2_flow_topics, remote_name
from tests.conftest import REPO_ROOT, run_cli
from tests.unit.test_regex import patterns

pytestmark = pytest.mark.integration

ACME = REPO_ROOT / "examples" / "acme"
# Every tenant's names, and names one character away from a tenant's prefix.
NEAR_MISSES = ["payments-eu.secret", "paymentsX.orders", "payments_orders", "payments", "Payments.orders",
               "payments.orders\n", "onprem.payments.orders", "mm2gov.payments-onprem-to-cloud.configs",
               "__consumer_offsets", "heartbeats", "marketingpayments.orders", "risk.exposures.internal"]


def tenant_names(inventory) -> list[str]:
    names = []
    for tenant in inventory.tenants.values():
        for prefix in tenant.topic_prefixes:
            names += [f"{prefix}orders", f"{prefix}refunds", f"{prefix}public.x", f"{prefix}leads.q",
                      f"{prefix}exposures", f"{prefix}limits.eu", f"{prefix}shipments", f"{prefix}campaigns"]
        names += [f"{p}app" for p in tenant.group_prefixes]
    return names


@pytest.fixture(scope="module")
def acme_generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("acme-generated")
    done = run_cli("generate", str(ACME), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_each_generated_flow_replicates_only_its_tenants_names(java_oracle, acme_generated):
    inventory = load_inventory(ACME)
    candidates = tenant_names(inventory) + NEAR_MISSES
    checked = 0
    for path in sorted((acme_generated / "mm2").glob("*.properties")):
        tenant = inventory.tenants[path.read_text().split("MirrorMaker 2 for tenant ", 1)[1].split(",", 1)[0]]
        answer = java_oracle.mm2(path=path, topics=candidates, groups=candidates)
        [pair] = answer.enabled_pairs
        assert pair.error is None
        flow = next(f for f in tenant.flows if (f.source, f.target) == (pair.source, pair.target))
        assert pair.topics, f"{path.name}: Java replicates none of the tenant's names"
        for topic in pair.topics:
            assert topic.startswith(tuple(tenant.topic_prefixes)), (path.name, topic)
            # exactly what the tenant's regexes say, compiled by Python over the same names
            assert any(re.fullmatch(regex, topic) for regex in flow.topics), (path.name, topic)
            assert pair.remote_topics[topic] == remote_name(flow.replication_policy, flow.source, topic)
        expected = {n for n in candidates if any(re.fullmatch(r, n) for r in flow.topics)
                    and not n.startswith(("__", "mm2gov.")) and not n.endswith(".internal")}
        assert set(pair.topics) == expected, path.name
        for group in pair.groups or ():
            assert group.startswith(tuple(tenant.group_prefixes)), (path.name, group)
        settings_ = pair.settings
        assert str(settings_["sync.topic.acls.enabled"]).lower() == "false"
        # offset translation on, in the flow's own topics as Java's MirrorMakerConfig and the flow's policy name them
        fid = flow_id(tenant.name, flow.source, flow.target)
        own = mm2_flow_topics(fid)
        assert settings_["replication.policy.class"] == REPLICATION_POLICY_CLASSES[flow.replication_policy]
        for key in ("emit.checkpoints.enabled", "sync.group.offsets.enabled", "emit.offset-syncs.enabled",
                    "emit.heartbeats.enabled"):
            assert str(settings_[key]).lower() == "true", (path.name, key)
        assert str(settings_["heartbeats.replication.enabled"]).lower() == "false"
        assert settings_["offset-syncs.topic.location"] == "target"
        assert (settings_["offset-syncs.topic"], settings_["checkpoints.topic"]) == (own.offset_syncs, own.checkpoints)
        assert not pair.connector_errors["MirrorCheckpointConnector"], pair.connector_errors
        assert not pair.connector_errors["MirrorHeartbeatConnector"], pair.connector_errors
        assert pair.source_client.bootstrap_servers == inventory.clusters[flow.source].bootstrap_servers
        assert pair.target_client.bootstrap_servers == inventory.clusters[flow.target].bootstrap_servers
        assert not pair.overrides
        checked += 1
    assert checked == 5


def test_values_that_need_escaping_reach_java_unchanged(java_oracle, tmp_path):
    """Backslashes, '=', ':', '#' and '!' inside a regex: Java reads back exactly the YAML's text."""
    repo = tmp_path / "repo"
    shutil.copytree(ACME, repo)
    tricky = r"payments\.a\=b\:c\#d\!e\\f"
    payments = repo / "tenants" / "payments.yaml"
    quoted = '"' + tricky.replace("\\", "\\\\") + '"'
    payments.write_text(payments.read_text().replace('"payments\\\\.refunds"', quoted))
    assert tricky in load_inventory(repo).tenants["payments"].flows[0].topics
    out = tmp_path / "out"
    done = run_cli("generate", str(repo), "--out", str(out))
    assert done.returncode == 0, done.stderr
    read = java_oracle.properties(path=out / "mm2" / "payments-onprem-to-cloud.properties").properties
    assert read["onprem->cloud.topics"].split(",") == load_inventory(repo).tenants["payments"].flows[0].topics
    assert len([k for k in read if k.endswith(".topics")]) == 1  # nothing became a key of its own


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=patterns(), names=st.lists(st.text(alphabet=st.sampled_from(list("abcxyz019_-.$(*")), max_size=12),
                                          min_size=5, max_size=25))
def test_python_analysis_holds_for_javas_matching(java_oracle, pattern, names):
    """Allowed patterns: Java and Python match the same names, and every Java match starts with
    a literal prefix of the analysis (what the Rego rules rely on)."""
    assume(pattern != "")  # an empty LIST value is no item at all to Kafka (and the schema refuses it)
    facts = analyse(pattern)
    java = set(java_oracle.matches(pattern, names, kind="group"))
    python = {n for n in names if re.fullmatch(pattern, n)}
    assert java == python, pattern
    for name in java:
        assert any(name.startswith(a.literal_prefix) and (not a.exact or name == a.literal_prefix)
                   for a in facts.alternatives), (pattern, name)


def test_one_yaml_item_is_one_kafka_list_item(java_oracle):
    """The grammar has no comma or blank, so each allowed regex stays one item of Kafka's LIST."""
    for regex in [r"payments\.orders.*", r"payments\.(a|b)", r"payments\.[a-z_.]{2}x?", r"^payments-$"]:
        analyse(regex)
        assert java_oracle.list_items(regex).items == (regex,)
    assert java_oracle.list_items(r"(payments\.x,.*)").items == ("(payments\\.x", ".*)")


def test_generated_properties_never_hold_a_value_java_reads_differently(java_oracle, acme_generated):
    """Every key/value mm2gov meant is what Java reads, for every generated file."""
    from governance.compile.desired import compile_desired
    from governance.compile.mm2 import flow_entries
    from governance.policy.decide import decide

    inventory = load_inventory(ACME)
    decision = decide(inventory)
    state = compile_desired(inventory, decision)
    for flow in state.flows:
        spec = next(f for f in decision.tenancy.tenants[flow.tenant].flows if f.id == flow.flow_id)
        meant = {e[0]: e[1] for e in flow_entries(flow.tenant, spec, inventory.clusters, "/etc/mm2gov/secrets",
                                                  state.header) if isinstance(e, tuple)}
        read = java_oracle.properties(flow.properties).properties
        for key, value in meant.items():
            assert key in read, (flow.flow_id, key)
            if read[key] is not None:  # the oracle never echoes secret-looking keys
                assert read[key] == value, (flow.flow_id, key)
        assert set(read) == set(meant), flow.flow_id


def test_each_generated_strimzi_mirror_replicates_only_its_tenants_names(java_oracle, acme_generated):
    """Strimzi hands `topicsPattern`/`groupsPattern` (and the exclude) to MM2's `topics`/`groups`
    LIST configs: Kafka's own filters are asked what each generated mirror passes."""
    import yaml

    inventory = load_inventory(ACME)
    candidates = tenant_names(inventory) + NEAR_MISSES
    mirrors = 0
    for path in sorted((acme_generated / "strimzi").glob("kafkamirrormaker2_*.yaml")):
        obj = yaml.safe_load(path.read_text())
        tenant = inventory.tenants[obj["metadata"]["labels"]["mm2gov.io/tenant"]]
        for mirror in obj["spec"]["mirrors"]:
            topics = java_oracle.matches(mirror["topicsPattern"], candidates, "topic",
                                         exclude=mirror["topicsExcludePattern"])
            groups = java_oracle.matches(mirror["groupsPattern"], candidates, "group")
            assert topics and all(t.startswith(tuple(tenant.topic_prefixes)) for t in topics), (path.name, topics)
            assert groups and all(g.startswith(tuple(tenant.group_prefixes)) for g in groups), (path.name, groups)
            mirrors += 1
    assert mirrors == 3  # the flows whose target has a strimzi section
