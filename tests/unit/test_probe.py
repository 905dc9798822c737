"""The probe's pure core: canaries round-trip, and assess() reports exactly the faults a simulated flow
injects (lost, duplicated, misplaced, reordered, foreign records) with latencies on one clock."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.probe.assess import Slo, assess, misses, percentile
from governance.probe.canary import Canary, Received, decode

RUN = "r-1f2e"


def canaries(partitions: int, per_partition: int, start_ms: int = 1_000) -> list[Canary]:
    return [Canary(RUN, p, s, start_ms + 10 * s) for p in range(partitions) for s in range(per_partition)]


def delivered(sent: list[Canary], delay_ms: int = 50) -> list[Received]:
    return [Received(c.partition, c.seq, c.encode(), c.sent_ms + delay_ms) for c in sent]


def test_a_canary_round_trips_and_other_values_are_not_canaries():
    canary = Canary(RUN, 3, 7, 1_700_000_000_000)
    assert decode(canary.encode()) == canary
    for value in [None, b"", b"hello", b"\xff\xfe", b"[1]", json.dumps({"run": RUN}).encode(),
                  canary.encode().replace(b'"seq":7', b'"seq":-1'), canary.encode().replace(b"7", b"true", 1),
                  canary.encode().replace(b"mm2gov-probe/1", b"mm2gov-probe/2"), b"{" + b" " * 2000 + b"}"]:
        assert decode(value) is None, value


def test_a_healthy_flow_meets_its_slo():
    sent = canaries(3, 20)
    result = assess(RUN, sent, delivered(sent, 40))
    assert (result.sent, result.delivered, result.lost, result.duplicated) == (60, 60, (), 0)
    assert (result.reordered, result.misplaced, result.foreign) == (0, 0, 0)
    assert (result.latency.p50_ms, result.latency.p99_ms, result.latency.max_ms) == (40, 40, 40)
    assert misses(result, Slo(latency_p99_ms=100)) == []


def test_a_restarted_at_least_once_flow_shows_its_duplicates_and_not_as_reordering():
    sent = canaries(1, 10)
    copies = delivered(sent[:6]) + delivered(sent[3:6]) + delivered(sent[6:])  # MM2 re-sent 3..5 after a crash
    copies = [Received(0, offset, r.value, r.received_ms) for offset, r in enumerate(copies)]
    result = assess(RUN, sent, copies)
    assert (result.delivered, result.duplicated, result.reordered, result.lost) == (10, 3, 0, ())
    assert misses(result, Slo(latency_p99_ms=1000)) == ["3 duplicate copies (SLO: at most 0)"]


def test_another_runs_or_a_tenants_records_are_foreign_and_cannot_fake_a_delivery():
    sent = canaries(2, 5)
    fakes = [Received(0, 100 + i, Canary("other-run", 0, i, 0).encode(), 5_000) for i in range(5)]
    fakes += [Received(1, 200, b"not a canary", 5_000)]
    result = assess(RUN, sent, delivered(sent[:5]) + fakes)
    assert result.foreign == 6 and result.delivered == 5
    assert result.lost == tuple((1, s) for s in range(5))


def test_unacknowledged_canaries_of_the_run_are_neither_lost_nor_duplicates():
    sent = canaries(1, 4)
    extra = Canary(RUN, 0, 4, 2_000)  # the producer reported a failure, yet the record was written
    result = assess(RUN, sent, delivered(sent) + delivered([extra]))
    assert (result.unacknowledged, result.duplicated, result.lost) == (1, 0, ())


def test_nothing_acknowledged_is_a_miss_not_a_pass():
    assert misses(assess(RUN, [], []), Slo(latency_p99_ms=1)) == [
        "no canary was acknowledged by the source: nothing was measured"]


@pytest.mark.parametrize(("values", "fraction", "expected"),
                         [([5], 0.99, 5), ([1, 2, 3, 4], 0.5, 2), (list(range(1, 101)), 0.99, 99),
                          (list(range(100, 0, -1)), 0.5, 50)])
def test_percentile_is_nearest_rank(values, fraction, expected):
    assert percentile(values, fraction) == expected


@settings(max_examples=300, deadline=None)
@given(data=st.data(), partitions=st.integers(1, 4), per_partition=st.integers(1, 30))
def test_assess_reports_exactly_the_injected_faults(data, partitions, per_partition):
    sent = canaries(partitions, per_partition)
    fate = {(c.partition, c.seq): data.draw(st.sampled_from(["ok", "ok", "ok", "lost", "dup", "moved"]))
            for c in sent}
    delays = {key: data.draw(st.integers(0, 5_000)) for key in fate}
    lanes: dict[int, list[tuple[Canary, int]]] = {p: [] for p in range(partitions + 1)}
    for canary in sent:  # in send order, per source partition: MM2 keeps that order
        key = (canary.partition, canary.seq)
        if fate[key] == "lost":
            continue
        lane = partitions if fate[key] == "moved" else canary.partition
        lanes[lane].append((canary, canary.sent_ms + delays[key]))
        if fate[key] == "dup":
            lanes[lane].append((canary, canary.sent_ms + delays[key] + 1))
    foreign = data.draw(st.integers(0, 5))
    lanes[0] += [(Canary("other", 0, i, 0), 0) for i in range(foreign)]
    received = [Received(lane, offset, c.encode(), at) for lane, items in lanes.items()
                for offset, (c, at) in enumerate(items)]
    result = assess(RUN, sent, received)
    count = {kind: sum(1 for f in fate.values() if f == kind) for kind in ("lost", "dup", "moved")}
    assert len(result.lost) == count["lost"]
    assert result.duplicated == count["dup"]
    assert result.misplaced == count["moved"]
    assert result.reordered == 0
    assert result.foreign == foreign
    assert result.delivered == len(sent) - count["lost"]
    kept = [delays[key] for key, f in fate.items() if f != "lost"]
    if kept:
        assert result.latency.max_ms == max(kept)
        assert result.latency.p50_ms <= result.latency.p99_ms <= result.latency.max_ms


def test_a_swapped_pair_is_one_reordered_canary():
    sent = canaries(1, 5)
    order = [0, 1, 3, 2, 4]
    received = [Received(0, offset, sent[i].encode(), 2_000) for offset, i in enumerate(order)]
    result = assess(RUN, sent, received)
    assert result.reordered == 1
    assert misses(result, Slo(latency_p99_ms=10_000)) == ["1 canaries out of order (SLO: at most 0)"]


class _Consumer:
    """A consumer whose first answers are broker errors. A mock: NOT_LEADER_FOR_PARTITION comes from a real broker
    only in the instant after a topic is created (seen once in a suite run), not on demand."""

    def __init__(self, errors: list[int]) -> None:
        self.errors, self.asked = errors, 0

    def list_topics(self, topic, timeout):
        from types import SimpleNamespace
        return SimpleNamespace(topics={topic: SimpleNamespace(error=None, partitions={0: None})})

    def get_watermark_offsets(self, partition, timeout):
        from confluent_kafka import KafkaError, KafkaException
        self.asked += 1
        if self.errors:
            raise KafkaException(KafkaError(self.errors.pop(0)))
        return 0, 42


def _reader(consumer: _Consumer):
    from governance.probe.live import TargetReader
    reader = object.__new__(TargetReader)
    reader.alias, reader.topic, reader.consumer, reader.start = "target", "source.t.mm2gov-probe", consumer, {}
    return reader


def test_end_offsets_of_a_topic_whose_leader_is_not_known_yet_are_asked_again():
    from confluent_kafka import KafkaError
    consumer = _Consumer([KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE])
    reader = _reader(consumer)
    reader.mark()
    assert reader.start == {0: 42} and consumer.asked == 3


def test_an_error_that_asking_again_cannot_mend_fails_at_once():
    from confluent_kafka import KafkaError

    from governance.errors import RuntimeFailure
    consumer = _Consumer([KafkaError.TOPIC_AUTHORIZATION_FAILED])
    with pytest.raises(RuntimeFailure, match=r"end offsets of source\.t\.mm2gov-probe"):
        _reader(consumer).mark()
    assert consumer.asked == 1
