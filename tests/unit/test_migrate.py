"""governance/migrate: Connect offset records (parse, replay, write) and the cut-over plan.

The byte format itself is checked against Kafka's JsonConverter in
tests/integration/test_migrate_oracle.py; here: round trips, replay semantics, malformed input,
and the plan's isolation invariants for hostile tenants' regexes (hypothesis).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from governance.migrate.offsets import (
    SOURCE_CONNECTOR,
    OffsetRecordError,
    RawRecord,
    SourcePosition,
    Tombstone,
    latest_positions,
    parse_record,
    seed_record,
)
from governance.migrate.plan import (
    AHEAD,
    ALIAS,
    AMBIGUOUS,
    FOREIGN,
    MISSING,
    OUTSIDE,
    POLICY,
    RETENTION,
    NewFlow,
    describe,
    plan,
)
from governance.model.names import connect_names, flow_id

names = st.from_regex(r"[A-Za-z0-9._-]{1,30}", fullmatch=True)
positions = st.builds(SourcePosition, st.just(SOURCE_CONNECTOR), names, names,
                      st.integers(0, 2**31 - 1), st.integers(0, 2**63 - 1))


def record(position: SourcePosition, at: int = 0, tombstone: bool = False) -> RawRecord:
    key, value = seed_record(position)
    return RawRecord(0, at, key, None if tombstone else value)


def new_flow(tenant: str, topics: tuple[str, ...], prefixes: tuple[str, ...], source: str = "onprem") -> NewFlow:
    return NewFlow(tenant, flow_id(tenant, source, "cloud"), source, "cloud", topics, prefixes)


def legacy(*positions: SourcePosition) -> dict:
    return {p.key: p for p in positions}


def pos(topic: str, partition: int = 0, offset: int = 10, cluster: str = "onprem",
        connector: str = SOURCE_CONNECTOR) -> SourcePosition:
    return SourcePosition(connector, cluster, topic, partition, offset)


# --- offsets.py ---------------------------------------------------------------------------------

@given(positions)
def test_a_written_record_parses_back(position):
    assert parse_record(record(position)) == position


@given(positions)
def test_a_tombstone_parses_as_the_key_it_deletes(position):
    assert parse_record(record(position, tombstone=True)) == Tombstone(position.key)


def test_the_key_names_connector_and_source_partition_in_connects_order():
    key, value = seed_record(pos("acme.orders", 3, 41))
    assert key == b'["MirrorSourceConnector",{"cluster":"onprem","partition":3,"topic":"acme.orders"}]'
    assert value == b'{"offset":41}'
    assert pos("acme.orders", 3, 41).resumes_at == 42


@given(st.lists(st.tuples(st.sampled_from(["a.x", "a.y", "b.x"]), st.integers(0, 2),
                          st.integers(0, 100), st.booleans()), max_size=40))
def test_replay_keeps_the_latest_record_per_key_and_tombstones_delete(ops):
    model: dict = {}
    records = []
    for at, (topic, partition, offset, tombstone) in enumerate(ops):
        position = pos(topic, partition, offset)
        records.append(record(position, at, tombstone))
        if tombstone:
            model.pop(position.key, None)
        else:
            model[position.key] = position
    assert latest_positions(records) == model


def test_other_connectors_records_are_skipped_not_refused():
    checkpoint = RawRecord(0, 5, b'["MirrorCheckpointConnector",{"group":"g","topic":"t","partition":0}]',
                           b'{"offset":0}')
    heartbeat = RawRecord(0, 6, b'["MirrorHeartbeatConnector",{"sourceClusterAlias":"a","targetClusterAlias":"b"}]',
                          b'{"offset":0}')
    assert parse_record(checkpoint) is None and parse_record(heartbeat) is None
    assert latest_positions([checkpoint, heartbeat, record(pos("a.x"), 7)]) == legacy(pos("a.x"))


@pytest.mark.parametrize(("key", "value"), [
    (None, b'{"offset":1}'),
    (b"not json", b'{"offset":1}'),
    (b"\xff\xfe", b'{"offset":1}'),
    (b'{"connector":"MirrorSourceConnector"}', b'{"offset":1}'),
    (b'["MirrorSourceConnector"]', b'{"offset":1}'),
    (b'["MirrorSourceConnector",{"cluster":"a","topic":"t"}]', b'{"offset":1}'),
    (b'["MirrorSourceConnector",{"cluster":"a","topic":"t","partition":"0"}]', b'{"offset":1}'),
    (b'["MirrorSourceConnector",{"cluster":"a","topic":"t","partition":-1}]', b'{"offset":1}'),
    (b'["MirrorSourceConnector",{"cluster":"a","topic":"t","partition":true}]', b'{"offset":1}'),
    (b'["MirrorSourceConnector",{"cluster":"a","topic":"t","partition":0,"x":1}]', b'{"offset":1}'),
    (b'["MirrorSourceConnector",{"cluster":"a","topic":"t","partition":0}]', b'{"offset":"1"}'),
    (b'["MirrorSourceConnector",{"cluster":"a","topic":"t","partition":0}]', b'{"offset":1.5}'),
    (b'["MirrorSourceConnector",{"cluster":"a","topic":"t","partition":0}]', b'{"offset":-2}'),
    (b'["MirrorSourceConnector",{"cluster":"a","topic":"t","partition":0}]', b'{"offset":1,"x":2}'),
    (b'["MirrorSourceConnector",{"cluster":"a","topic":"t","partition":0}]', b"[1]"),
])
def test_a_malformed_record_is_an_error_naming_its_offset(key, value):
    with pytest.raises(OffsetRecordError, match=r"offsets record 4@1234:"):
        parse_record(RawRecord(4, 1234, key, value))


@pytest.mark.parametrize("topic", ['a"b', "a\\b", "a b", "ä", "", "a\nb"])
def test_seed_record_refuses_names_connect_would_encode_differently(topic):
    with pytest.raises(ValueError):
        seed_record(pos(topic))


# --- plan.py ------------------------------------------------------------------------------------

TENANTS = ("t0", "t1", "t2")
TOPICS = ("t0.a", "t0.b", "t1.a", "t1.t0.a", "t0x.a", "t2-a", "other.a")
REGEXES = (r".*", r"t0\..*", r"t1\..*", r"t0.*", r"t1.*", r"t2-.*", r"other\.a", r"t0\.a|t1\.a", r"^$")


@st.composite
def migrations(draw):
    flows = []
    for tenant in draw(st.lists(st.sampled_from(TENANTS), min_size=1, max_size=3, unique=True)):
        regexes = tuple(draw(st.lists(st.sampled_from(REGEXES), min_size=1, max_size=2)))
        flows.append(new_flow(tenant, regexes, (f"{tenant}.",)))
    held = draw(st.lists(st.builds(pos, st.sampled_from(TOPICS), st.integers(0, 2), st.integers(0, 99)),
                         max_size=20))
    return flows, legacy(*held)


@given(migrations())
def test_a_flows_seeds_stay_inside_its_tenants_prefixes(migration):
    flows, held = migration
    by_flow = {flow.flow: flow for flow in flows}
    for seed in plan(held, "onprem", flows).seeds:
        flow = by_flow[seed.flow]
        assert any(seed.position.topic.startswith(prefix) for prefix in flow.prefixes)
        assert seed.offsets_topic == connect_names(flow.flow).offsets
        assert (seed.position.connector, seed.position.cluster) == (SOURCE_CONNECTOR, flow.source)


@given(migrations())
def test_every_legacy_position_is_seeded_once_reported_or_refused(migration):
    flows, held = migration
    result = plan(held, "onprem", flows)
    seeded = [seed.position for seed in result.seeds]
    assert len(seeded) == len(set(seeded))
    refused = {r.topic for r in result.refusals}
    for position in held.values():
        takers = [f for f in flows if any(re.fullmatch(r, position.topic) for r in f.topics)]
        if not takers:
            assert position in result.untaken and position not in seeded
        elif len(takers) > 1:
            assert position.topic in refused and position not in seeded
            assert (position.topic, AMBIGUOUS) in {(r.topic, r.kind) for r in result.refusals}
        elif not position.topic.startswith(takers[0].prefixes):
            assert (position.topic, OUTSIDE) in {(r.topic, r.kind) for r in result.refusals}
            assert position not in seeded
        else:
            assert seeded.count(position) == 1
    assert result.ok == (not result.refusals)


def test_two_tenants_taking_one_topic_is_refused_and_neither_is_seeded():
    flows = [new_flow("t0", (r"t0\..*",), ("t0.",)), new_flow("t1", (r".*",), ("t1.",))]
    result = plan(legacy(pos("t0.a"), pos("t1.a", 1, 7)), "onprem", flows)
    assert not result.ok
    assert [(r.kind, r.topic) for r in result.refusals] == [(AMBIGUOUS, "t0.a")]
    assert [(s.flow, s.position) for s in result.seeds] == [(flows[1].flow, pos("t1.a", 1, 7))]


def test_a_legacy_connector_of_another_name_is_read_when_named():
    named = pos("t0.a", connector="legacy-source")
    assert latest_positions([record(named)]) == {}
    assert latest_positions([record(named)], "legacy-source") == legacy(named)
    result = plan(legacy(named), "onprem", [new_flow("t0", (r"t0\..*",), ("t0.",))],
                  legacy_connector="legacy-source")
    assert result.ok and [s.position for s in result.seeds] == [pos("t0.a")]


def test_positions_of_another_alias_or_connector_are_refused():
    held = legacy(pos("t0.a"), pos("t0.b", cluster="elsewhere"), pos("t0.c", connector="OtherConnector"))
    result = plan(held, "onprem", [new_flow("t0", (r"t0\..*",), ("t0.",))])
    assert sorted((r.kind, r.topic) for r in result.refusals) == [(FOREIGN, "t0.b"), (FOREIGN, "t0.c")]
    assert [s.position.topic for s in result.seeds] == ["t0.a"]


def test_a_flow_reading_another_source_alias_is_refused():
    result = plan(legacy(pos("t0.a")), "onprem", [new_flow("t0", (r"t0\..*",), ("t0.",), source="dc2")])
    assert [r.kind for r in result.refusals] == [ALIAS]


def test_a_taken_partition_without_a_legacy_position_is_missing_unless_empty():
    flows = [new_flow("t0", (r"t0\..*",), ("t0.",))]
    result = plan(legacy(pos("t0.a", 0)), "onprem", flows, {"t0.a": 3, "t0.new": 1, "t1.a": 2})
    assert sorted((r.kind, r.topic, r.partition) for r in result.refusals) == [
        (MISSING, "t0.a", 1), (MISSING, "t0.a", 2), (MISSING, "t0.new", 0)]
    empty = frozenset({("t0.a", 1), ("t0.a", 2), ("t0.new", 0)})
    assert plan(legacy(pos("t0.a", 0)), "onprem", flows, {"t0.a": 3, "t0.new": 1}, empty).ok


def test_untaken_positions_are_reported_not_seeded():
    result = plan(legacy(pos("t0.a"), pos("gone.x", 2, 5)), "onprem", [new_flow("t0", (r"t0\..*",), ("t0.",))])
    assert result.ok
    assert result.untaken == (pos("gone.x", 2, 5),)
    assert describe(result) == [
        f"{flow_id('t0', 'onprem', 'cloud')}: t0.a-0 resumes at source offset 11 "
        f"(seeded into {connect_names(flow_id('t0', 'onprem', 'cloud')).offsets})",
        "not migrated (no flow takes it): gone.x-2 at 6"]


def test_positions_are_checked_against_the_sources_watermarks():
    flows = [new_flow("t0", (r"t0\..*",), ("t0.",))]
    held = legacy(pos("t0.a", 0, 9), pos("t0.a", 1, 9), pos("t0.a", 2, 9), pos("t0.a", 3, 9))
    marks = {("t0.a", 0): (0, 10), ("t0.a", 1): (12, 20), ("t0.a", 2): (0, 5), ("t0.a", 3): (10, 30)}
    result = plan(held, "onprem", flows, {"t0.a": 4}, watermarks=marks)
    assert sorted((r.kind, r.partition) for r in result.refusals) == sorted([(AHEAD, 2), (RETENTION, 1)])
    assert [(s.position.partition, s.position.resumes_at) for s in result.seeds] == [(0, 10), (3, 10)]
    accepted = plan(held, "onprem", flows, {"t0.a": 4}, watermarks=marks, accept_retention_loss=True)
    assert [(r.kind, r.partition) for r in accepted.refusals] == [(AHEAD, 2)]
    assert [(r.kind, r.partition) for r in accepted.lost] == [(RETENTION, 1)]
    assert (1, 12) in [(s.position.partition, s.position.resumes_at) for s in accepted.seeds]  # at the log start


def test_an_empty_source_partition_needs_no_position_and_a_gone_one_is_not_seeded():
    flows = [new_flow("t0", (r"t0\..*",), ("t0.",))]
    held = legacy(pos("t0.a", 0, 9), pos("t0.a", 5, 9), pos("t0.gone", 0, 3))
    result = plan(held, "onprem", flows, {"t0.a": 2}, watermarks={("t0.a", 0): (0, 10), ("t0.a", 1): (7, 7)})
    assert result.ok, result.refusals
    assert [s.position for s in result.seeds] == [pos("t0.a", 0, 9)]
    assert sorted(result.gone) == [pos("t0.a", 5, 9), pos("t0.gone", 0, 3)]
    assert "not migrated (no longer on the source): t0.gone-0 at 4" in describe(result)


def test_a_flow_whose_remote_names_differ_from_the_legacy_policys_is_refused():
    flows = [new_flow("t0", (r"t0\..*",), ("t0.",))]
    assert plan(legacy(pos("t0.a")), "onprem", flows, legacy_policy="default").ok
    for legacy_policy in ("identity", None):
        assert [r.kind for r in plan(legacy(pos("t0.a")), "onprem", flows, legacy_policy=legacy_policy).refusals] == [
            POLICY]


def test_a_topic_the_flow_excludes_is_not_taken_so_not_seeded_nor_required():
    flow = NewFlow("t0", flow_id("t0", "onprem", "cloud"), "onprem", "cloud", (r"t0\..*",), ("t0.",),
                   exclude=(r"t0\.old.*",))
    result = plan(legacy(pos("t0.a"), pos("t0.old1")), "onprem", [flow], {"t0.a": 1, "t0.old1": 1, "t0.old2": 1})
    assert result.ok, result.refusals
    assert [s.position.topic for s in result.seeds] == ["t0.a"] and result.untaken == (pos("t0.old1"),)
