"""Broker compatibility verdicts (governance/kafka/version.py): pure, over generated version tables.

A real broker older than 2.1 cannot run here (ZooKeeper and Java 8-era code), so its refusal is exercised
with the ApiVersions a Kafka 2.0 broker answers (the ranges below, from the protocol guide: 2.0 added
DescribeAcls v1 and answered OffsetForLeaderEpoch up to v1; v2 came with KIP-320 in 2.1).
"""

from __future__ import annotations

import dataclasses
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from governance.errors import RuntimeFailure
from governance.kafka import api_versions, version
from governance.kafka.api_versions import UNSUPPORTED_VERSION, parse_response
from governance.kafka.version import (
    APIS,
    ROLES,
    BrokerVersions,
    describe,
    flow_verdicts,
    judge,
    minimum_release,
    refusal,
)

BY_NAME = {api.name: api for api in APIS}
KAFKA_2_0 = {  # API -> (min, max) that a Kafka 2.0 broker answers
    "Produce": (0, 6), "Fetch": (0, 8), "ListOffsets": (0, 3), "Metadata": (0, 6), "OffsetCommit": (0, 4),
    "OffsetFetch": (0, 4), "FindCoordinator": (0, 2), "JoinGroup": (0, 3), "Heartbeat": (0, 2),
    "SyncGroup": (0, 2), "DescribeGroups": (0, 2), "ListGroups": (0, 2), "SaslHandshake": (0, 1),
    "ApiVersions": (0, 2), "CreateTopics": (0, 3), "InitProducerId": (0, 1), "OffsetForLeaderEpoch": (0, 1),
    "AddPartitionsToTxn": (0, 1), "EndTxn": (0, 1), "TxnOffsetCommit": (0, 1), "DescribeAcls": (0, 1),
    "DescribeConfigs": (0, 2), "SaslAuthenticate": (0, 1), "CreatePartitions": (0, 1),
}


def broker(ranges: dict[str, tuple[int, int]], features: dict[str, int] | None = None) -> BrokerVersions:
    return BrokerVersions("127.0.0.1:9092", {BY_NAME[n].key: r for n, r in ranges.items()}, features or {})


def floors() -> dict[str, tuple[int, int]]:
    """A broker that answers exactly the client's oldest version of every API."""
    return {api.name: (0, api.oldest) for api in APIS}


def test_the_minimum_release_is_derived_from_the_client_floors_and_is_2_1():
    assert minimum_release(APIS, "source") == minimum_release(APIS, "target") == "2.1"
    assert BY_NAME["OffsetForLeaderEpoch"].since == "2.1"


def test_a_broker_at_the_floors_passes_in_both_roles():
    assert all(judge("legacy", role, [broker(floors())]).ok for role in ROLES)


def test_a_kafka_2_0_source_is_refused_in_one_line_naming_cluster_and_minimum():
    verdict = judge("legacy", "source", [broker(KAFKA_2_0)])
    assert not verdict.ok
    line = verdict.line()
    assert "\n" not in line and line.startswith("cluster legacy (source")
    assert "OffsetForLeaderEpoch, MM2 needs v2+" in line and "Kafka 2.1 (KIP-896)" in line
    assert "no metadata.version" in line


def test_refusal_names_only_the_clusters_that_fail():
    evidence = {"legacy": [broker(KAFKA_2_0)], "target": [broker(floors(), {"metadata.version": 30})]}
    verdicts = flow_verdicts([("legacy", "target")], evidence)
    assert [(v.cluster, v.role, v.ok) for v in verdicts] == [("legacy", "source", False), ("target", "target", True)]
    message = refusal(verdicts)
    assert message is not None and message.startswith("cluster legacy") and "cluster target" not in message
    assert refusal(verdicts[1:]) is None
    assert "4.3-IV0" in verdicts[1].version


def test_no_broker_means_refused():
    assert not judge("gone", "target", []).ok


ranges = st.tuples(st.integers(0, 20), st.integers(0, 20)).map(sorted).map(tuple)


@given(table=st.fixed_dictionaries({api.name: ranges for api in APIS}), role=st.sampled_from(sorted(ROLES)))
def test_a_cluster_passes_exactly_when_every_needed_api_overlaps_the_clients_range(table, role):
    verdict = judge("c", role, [broker(table)])
    expected = all(table[a.name][1] >= a.oldest and table[a.name][0] <= a.newest for a in APIS if a.name in ROLES[role])
    assert verdict.ok == expected
    assert ("Kafka 2.1 (KIP-896)" in verdict.line()) == any(
        table[a.name][1] < a.oldest for a in APIS if a.name in ROLES[role])


@given(name=st.sampled_from(sorted(ROLES["source"])), role=st.sampled_from(sorted(ROLES)))
def test_a_missing_api_refuses_the_role_that_needs_it(name, role):
    table = floors()
    del table[name]
    assert judge("c", role, [broker(table)]).ok == (name not in ROLES[role])


@given(st.lists(st.sampled_from(sorted(ROLES["source"])), min_size=1, max_size=4, unique=True), st.integers(0, 30))
def test_one_bad_broker_refuses_the_whole_cluster(names, seed):
    bad = floors()
    for name in names:
        bad[name] = (0, BY_NAME[name].oldest - 1) if BY_NAME[name].oldest else (0, 0)
    good = broker(floors())
    verdict = judge("c", "source", [good, BrokerVersions("127.0.0.2:9092", broker(bad).apis)])
    assert verdict.ok == all(BY_NAME[n].oldest == 0 for n in names)


def test_the_verdicts_read_the_table_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    """The API table is looked up when a verdict is made, not bound at import: a test that runs the CLI in
    process replaces it (tests/integration/test_older_broker.py, to see a real broker refused)."""
    good = broker(floors())
    assert judge("c", "source", [good]).ok
    needs_more = tuple(dataclasses.replace(api, oldest=99, since="(unknown)") if api.name == "ListGroups" else api
                       for api in APIS)
    monkeypatch.setattr(version, "APIS", needs_more)
    refused = judge("c", "source", [good])
    assert not refused.ok and "ListGroups, MM2 needs v99+" in refused.line()
    assert [v.ok for v in flow_verdicts([("c", "d")], {"c": [good], "d": [good]})] == [False, True]
    # the check `mm2gov apply` runs before changing anything (each broker's answer stubbed here)
    monkeypatch.setattr(api_versions, "read_cluster", lambda alias, config, brokers: [good])
    with pytest.raises(RuntimeFailure, match=r"^cluster c \(source, .*ListGroups, MM2 needs v99\+"):
        api_versions.check_flows([("c", "d")], {"c": {}, "d": {}}, {"c": ["c:9092"], "d": ["d:9092"]})


@given(table=st.dictionaries(st.integers(0, 80), ranges, max_size=40),
       level=st.one_of(st.none(), st.integers(1, 40)))
def test_an_api_versions_v3_response_parses_back(table, level):
    def uvarint(n: int) -> bytes:
        out = b""
        while True:
            byte, n = n & 0x7F, n >> 7
            out += bytes([byte | (0x80 if n else 0)])
            if not n:
                return out

    body = struct.pack(">h", 0) + uvarint(len(table) + 1)
    body += b"".join(struct.pack(">hhh", k, lo, hi) + b"\x00" for k, (lo, hi) in table.items())
    body += struct.pack(">i", 0)
    tags = []
    if level is not None:
        name = b"metadata.version"
        feature = uvarint(2) + uvarint(len(name) + 1) + name + struct.pack(">hh", level, 1) + b"\x00"
        tags = [uvarint(1) + uvarint(8) + struct.pack(">q", 7), uvarint(2) + uvarint(len(feature)) + feature]
    body += uvarint(len(tags)) + b"".join(tags)
    error, apis, features = parse_response(body, 3)
    assert (error, apis) == (0, table)
    assert features == ({} if level is None else {"metadata.version": level})


def test_an_old_brokers_v0_answer_to_v3_gives_its_ranges():
    body = struct.pack(">hi", UNSUPPORTED_VERSION, 2) + struct.pack(">hhh", 0, 0, 6) + struct.pack(">hhh", 23, 0, 1)
    assert parse_response(body, 3) == (UNSUPPORTED_VERSION, {0: (0, 6), 23: (0, 1)}, {})


def test_describe_names_the_metadata_version():
    assert describe([broker({}, {"metadata.version": 21})]) == "metadata.version 3.9-IV0 (level 21)"
    assert "older than 3.3-IV3" in describe([broker({}, {"metadata.version": 4})])
