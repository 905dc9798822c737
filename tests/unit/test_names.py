"""Derived names are injective: two different inputs never give one flow id, principal or secret name."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.model import names

LABEL = st.from_regex(r"\A[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?\Z", fullmatch=True)
USER = st.one_of(LABEL, st.text(alphabet="abcXYZ-._@09", min_size=1, max_size=14))


def test_known_collisions_of_the_old_encoding_are_gone():
    assert names.flow_id("pay", "eu-onprem", "x") != names.flow_id("pay-eu", "onprem", "x")
    assert names.scram_secret("onprem-dr", "User:app") != names.scram_secret("onprem", "User:dr-app")
    assert names.scram_secret("a", "User:Payments-App") != names.scram_secret("a", "User:payments-app")
    assert names.tls_secret("a", "User:x.y") != names.tls_secret("a", "User:x-y")


def test_names_without_hyphens_read_as_before():
    assert names.flow_id("payments", "onprem", "onprem-dr") == "payments-onprem-to-onprem-dr"
    assert names.mm2_principal("payments-onprem-to-cloud") == "User:mm2-payments-onprem-to-cloud"
    assert names.mm2_internal_prefix("payments-onprem-to-cloud") == "mm2gov.payments-onprem-to-cloud."
    assert names.scram_secret("onprem", "User:payments-app") == "scram-onprem-payments-app"


def test_a_plain_user_cannot_take_another_users_hashed_form():
    hashed = names.user_part("Payments-App")
    assert "." in hashed
    assert names.scram_secret("a", f"User:{hashed}") != names.scram_secret("a", "User:Payments-App")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(LABEL, LABEL, LABEL), min_size=2, max_size=30, unique=True))
def test_flow_ids_are_injective(flows):
    ids = {names.flow_id(*flow) for flow in flows}
    assert len(ids) == len(flows)
    mm2 = {names.mm2_internal_prefix(i) for i in ids} | {names.mm2_principal(i) for i in ids}
    assert len(mm2) == 2 * len(flows)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(LABEL, LABEL, LABEL), min_size=2, max_size=30, unique=True))
def test_each_flows_mm2_topics_are_its_own(flows):
    """Every MM2 topic of a flow (Connect's and the ReplicationPolicy's) is inside the flow's own
    prefix, distinct from each other, and no two flows share one."""
    seen: dict[str, str] = {}
    for flow in {names.flow_id(*f) for f in flows}:
        connect, mm2 = names.connect_names(flow), names.mm2_flow_topics(flow)
        own = [connect.group, connect.configs, connect.offsets, connect.status,
               mm2.offset_syncs, mm2.checkpoints, mm2.heartbeats]
        assert len(set(own)) == len(own)
        assert all(name.startswith(names.mm2_internal_prefix(flow)) for name in own)
        for name in own:
            assert seen.setdefault(name, flow) == flow, f"{name} of {flow} and {seen[name]}"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(LABEL, USER), min_size=2, max_size=40, unique=True))
def test_secret_names_are_injective(pairs):
    scram = {names.scram_secret(cluster, f"User:{user}") for cluster, user in pairs}
    tls = {names.tls_secret(cluster, f"User:{user}") for cluster, user in pairs}
    assert len(scram) == len(pairs) == len(tls)
    assert not scram & tls


@settings(max_examples=200, deadline=None)
@given(USER)
def test_secret_names_are_valid_kubernetes_names(user):
    name = names.scram_secret("onprem-dr", f"User:{user}")
    assert len(name) <= 253
    assert all(part and part[0].isalnum() and part[-1].isalnum() for part in name.split("."))
    assert set(name) <= set("abcdefghijklmnopqrstuvwxyz0123456789-.")


def test_remote_names_follow_the_replication_policy():
    assert names.remote_name("default", "onprem", "payments.x") == "onprem.payments.x"
    assert names.remote_name("identity", "onprem", "payments.x") == "payments.x"
    assert names.remote_prefix("identity", "onprem") == ""


def test_transactional_ids_are_connects_own():
    """Worker.taskTransactionalId is `<group.id>-<connector>-<task>`, DistributedConfig.transactionalProducerId
    `connect-cluster-<group.id>` (Kafka 4.x); the flow's group.id is its Connect group."""
    ids = names.mm2_transactional_ids("payments-onprem-to-cloud")
    assert ids.tasks == "mm2gov.payments-onprem-to-cloud.connect-"
    assert ids.leader == "connect-cluster-mm2gov.payments-onprem-to-cloud.connect"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(LABEL, LABEL, LABEL), min_size=2, max_size=30, unique=True))
def test_no_flows_transactional_ids_reach_another_flows(flows):
    """A flow's task prefix covers none of another flow's ids, and its leader id is no one else's."""
    ids = {flow: names.mm2_transactional_ids(flow) for flow in {names.flow_id(*f) for f in flows}}
    for flow, own in ids.items():
        for other, theirs in ids.items():
            if other == flow:
                continue
            for name in (f"{theirs.tasks}MirrorSourceConnector-0", theirs.leader):
                assert not name.startswith(own.tasks) and name != own.leader, (flow, other, name)


# ---- canonical forms (issue 24, class 1) ------------------------------------------------------------------

RESERVED_USER_NAMES = ["admin", "ANONYMOUS", "mm2-payments-onprem-to-cloud", "mm2gov-probe-payments"]
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", " ", "\u00a0", "\u3000"]


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(RESERVED_USER_NAMES), flips=st.lists(st.booleans(), min_size=40, max_size=40),
       blank=st.sampled_from(INVISIBLE), at=st.integers(0, 40), fullwidth=st.booleans())
def test_every_form_a_reserved_user_can_be_typed_in_is_the_same_canonical_name(name, flips, blank, at, fullwidth):
    """A tenant's look-alikes of a reserved user, built from the allowed principal alphabet: case flips, an
    invisible or blank character anywhere, fullwidth letters. Kafka's /L mapping rules (case), a stray blank
    or a reviewer's eye take them as the same name; so does names.canonical."""
    typed = "".join(c.upper() if flip else c.lower() for c, flip in zip(name, flips, strict=False))
    if fullwidth:
        typed = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in typed)
    typed = typed[:at] + blank + typed[at:]
    assert names.canonical(typed) == names.canonical(name) == name.lower()


@given(text=st.text(max_size=30))
def test_canonical_is_a_fixed_point(text):
    once = names.canonical(text)
    assert names.canonical(once) == once


def test_distinct_plain_names_stay_distinct():
    assert names.canonical("payments-app") != names.canonical("payments-app2")
    assert names.canonical("User:a.b") != names.canonical("User:a-b")  # what Kafka tells apart stays apart


def test_the_input_carries_each_principals_canonical_form():
    from governance.config import load_inventory
    from governance.policy.input import build_input
    from tests.conftest import REPO_ROOT

    tenants = build_input(load_inventory(REPO_ROOT / "examples" / "acme"))["tenants"]
    principals = [p for t in tenants.values() for p in t["principals"]]
    assert principals and all(p["canonical"] == names.canonical(p["name"]) for p in principals)
    reserved = build_input(load_inventory(REPO_ROOT / "examples" / "acme"))["reserved"]["user"]
    assert {r["canonical"] for r in reserved} == {"anonymous", "admin", "mm2-", "mm2gov"}


@pytest.mark.parametrize("alias, covered", [("mm2gov", ["mm2gov."]), ("mm2-dr", ["mm2-"]),
                                            ("connect-eu", ["connect-"]), ("onprem", []), ("heartbeat", [])])
def test_an_alias_whose_remote_prefix_covers_a_reserved_topic_conflicts(alias, covered):
    assert [r.text for r in names.alias_conflicts(alias)] == covered


# ---- Kubernetes object names (issue 24, class 3) ------------------------------------------------------
# Every name Kafka accepts for a topic: letters, digits, `.`, `_`, `-`, 1 to 249 characters.
TOPIC = st.text(alphabet="abcXYZ019._-", min_size=1, max_size=249).filter(lambda t: t not in (".", ".."))


def _look_alikes(topic: str) -> list[str]:
    """The names an attacker would declare next to `topic`: its folded forms and its own object name."""
    return [topic, topic.lower(), topic.replace("_", "-"), topic.replace(".", "-"), names.kafka_topic_object(topic)]


def test_the_old_kafka_topic_collision_is_gone():
    """Old encoding: `onprem.Payments.x` became `onprem.payments.x-<8 hex>`, a name another tenant could give
    its own topic, whose KafkaTopic then replaced the first (one file, one object)."""
    hashed = names.kafka_topic_object("onprem.Payments.x")
    assert names.kafka_topic_object(hashed) != hashed
    assert len({names.kafka_topic_object(t) for t in _look_alikes("onprem.Payments_x")}) == len(
        set(_look_alikes("onprem.Payments_x")))
    assert names.kafka_topic_object("onprem.payments.refunds") == "onprem.payments.refunds"  # plain: as before


@settings(max_examples=200, deadline=None)
@given(st.lists(TOPIC, min_size=1, max_size=20))
def test_kafka_topic_object_names_are_injective_even_against_look_alikes(topics):
    declared = {look for topic in topics for look in _look_alikes(topic)}
    objects = {names.kafka_topic_object(t) for t in declared}
    assert len(objects) == len(declared)
    assert all(names.is_k8s_name(o) for o in objects)


# DNS labels up to 32 characters: flow ids of every length around Strimzi's limit, drawn quickly
LONG_LABEL = st.text(alphabet="ab0-", max_size=30).map(lambda s: f"a{s}z")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(LONG_LABEL, LONG_LABEL, LONG_LABEL), min_size=1, max_size=20, unique=True))
def test_mirror_maker_object_names_are_injective_and_fit_strimzis_service_names(flows):
    ids = [names.flow_id(*f) for f in flows]
    ids += [names.mirror_maker_object(i) for i in ids if len(i) >= names.MIRROR_MAKER_NAME_MAX]  # look-alikes
    objects = {names.mirror_maker_object(i) for i in set(ids)}
    assert len(objects) == len(set(ids))
    for name in objects:
        assert len(f"{name}-mirrormaker2-api") <= 63 and names.DNS_LABEL.match(name), name


def test_strimzi_file_names_are_one_per_object():
    assert names.strimzi_file("KafkaTopic", "kafka", "x-y") != names.strimzi_file("KafkaTopic", "kafka-x", "y")
