"""The pure parts of `mm2gov failover`: MM2's record formats, the flow filters, the resume offset, the loss and
re-read formulas (examples worked by hand, then invariants with hypothesis), the verdict and the output."""

from __future__ import annotations

import json
import struct
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.config.regex import RegexProblem, java_list_matcher
from governance.failover.assess import (
    PartitionFacts,
    Thresholds,
    assess,
    replicated_through,
    resume,
    verdict,
)
from governance.failover.records import (
    Checkpoint,
    OffsetSync,
    RecordFormatError,
    parse_checkpoint,
    parse_offset_sync,
)
from governance.render import failover as render
from tests.tools.scopes import model_flow

NOW = 1_800_000_000_000
LIMITS = Thresholds()
OFFSETS = st.integers(min_value=0, max_value=2**62)


def kafka_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def checkpoint_record(group: str, topic: str, partition: int, upstream: int, downstream: int,
                      version: int = 0) -> tuple[bytes, bytes]:
    """As Kafka's Checkpoint.recordKey()/recordValue() write it (value: header version, then V0 fields)."""
    key = kafka_string(group) + kafka_string(topic) + struct.pack(">i", partition)
    return key, struct.pack(">hqq", version, upstream, downstream) + kafka_string("")


def sync_record(topic: str, partition: int, upstream: int, downstream: int) -> tuple[bytes, bytes]:
    return kafka_string(topic) + struct.pack(">i", partition), struct.pack(">qq", upstream, downstream)


NAMES = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FFF), min_size=1, max_size=40)


@given(group=NAMES, topic=NAMES, partition=st.integers(0, 2**31 - 1), upstream=OFFSETS, downstream=OFFSETS)
def test_checkpoint_record_parses_back(group, topic, partition, upstream, downstream):
    parsed = parse_checkpoint(*checkpoint_record(group, topic, partition, upstream, downstream))
    assert parsed == Checkpoint(group, topic, partition, upstream, downstream, 0)


@given(topic=NAMES, partition=st.integers(0, 2**31 - 1), upstream=OFFSETS, downstream=OFFSETS)
def test_offset_sync_record_parses_back(topic, partition, upstream, downstream):
    assert parse_offset_sync(*sync_record(topic, partition, upstream, downstream)) == OffsetSync(
        topic, partition, upstream, downstream)


@pytest.mark.parametrize("key, value", [
    (None, b"\x00" * 18),
    (b"\x00\x05ab", b"\x00" * 18),  # the group's length runs past the key
    (checkpoint_record("g", "t", 0, 1, 1)[0], b"\x00\x00\x00"),  # value too short
    checkpoint_record("g", "t", 0, 1, 1, version=1),  # a version Kafka does not write
])
def test_malformed_checkpoints_are_refused(key, value):
    with pytest.raises(RecordFormatError):
        parse_checkpoint(key, value)


def test_malformed_offset_sync_is_refused():
    with pytest.raises(RecordFormatError):
        parse_offset_sync(kafka_string("t") + b"\x00\x00", b"\x00" * 16)


def test_flow_filter_matches_whole_names_of_any_list_item():
    matches = java_list_matcher(["pay\\.orders.*", "pay\\.refunds"])
    assert matches("pay.orders") and matches("pay.orders.eu") and matches("pay.refunds")
    assert not matches("pay.refunds2") and not matches("xpay.orders") and not matches("payXorders")
    assert not java_list_matcher([])("")  # a flow without groups selects none (MM2: groups=^$)


def test_flow_filter_refuses_a_regex_java_reads_differently():
    with pytest.raises(RegexProblem):
        java_list_matcher(["(?i)pay.*"])


def test_resume_prefers_the_synced_offset_then_the_checkpoint():
    checkpoint = Checkpoint("g", "s.t", 0, 4, 2)
    assert resume(3, checkpoint) == (3, "target-committed")
    assert resume(None, checkpoint) == (2, "checkpoint")
    assert resume(None, None) == (None, "auto.offset.reset")


def facts(**changes) -> PartitionFacts:
    """A group that consumed 4 of 10 records; MM2 copied all 10 (first sync 0 -> 0, 9 records after it on the
    target), checkpointed 4 -> 1 a second ago and synced 1 into the group on the target."""
    base = PartitionFacts(
        group="g", topic="t", partition=0, remote_topic="source.t", source_committed=4, source_log_start=0,
        source_log_end=10, target_committed=1, target_log_end=10, checkpoint=Checkpoint("g", "source.t", 0, 4, 1),
        checkpoint_ms=NOW - 1000, sync=OffsetSync("t", 0, 0, 0), after_sync=9, from_resume=9)
    return replace(base, **changes)


def test_worked_example_synced_group():
    report = assess(facts(), NOW, LIMITS)
    assert (report.resume_offset, report.resume_from) == (1, "target-committed")
    assert (report.replicated, report.not_replicated, report.skipped, report.reread) == (10, 0, 0, 3)
    assert report.checkpoint_age == 1.0 and report.ok


def test_worked_example_exactly_once_target_counts_records_not_offsets():
    # sync: source 5 is target 10; transaction markers after it: 3 records in target offsets 11..16
    report = assess(facts(source_log_end=9, sync=OffsetSync("t", 0, 5, 10), after_sync=3, target_committed=None,
                          checkpoint=Checkpoint("g", "source.t", 0, 4, 8), from_resume=5), NOW, LIMITS)
    assert (report.replicated, report.not_replicated) == (9, 0)
    assert (report.resume_offset, report.reread, report.skipped) == (8, 0, 0)  # 5 on T from 8 = 5 unconsumed


def test_records_not_yet_replicated_are_a_loss():
    report = assess(facts(source_log_end=17), NOW, LIMITS)
    assert (report.not_replicated, report.loss) == (7, 7)
    assert report.problems == ("would lose 7 record(s) (7 not replicated; max-loss 0)",)
    assert assess(facts(source_log_end=17), NOW, Thresholds(max_loss=7)).ok


def test_a_resume_offset_ahead_of_the_group_skips_records():
    # the group was rewound to 2 on the source after its checkpoint (4 -> 4) was synced
    report = assess(facts(source_committed=2, target_committed=4, checkpoint=Checkpoint("g", "source.t", 0, 4, 4),
                          from_resume=6), NOW, LIMITS)
    assert (report.skipped, report.reread, report.loss) == (2, 0, 2)
    assert "2 skipped by the resume offset" in report.problems[0]


def test_too_much_reread_fails():
    report = assess(facts(), NOW, Thresholds(max_reread=2))
    assert report.problems == ("would re-read 3 record(s) (max-reread 2)",)


def test_missing_checkpoint_and_resume_offset_fail():
    report = assess(facts(checkpoint=None, checkpoint_ms=None, target_committed=None, from_resume=0), NOW, LIMITS)
    assert report.resume_offset is None and report.reread is None
    assert [p.split(":")[0] for p in report.problems] == ["no checkpoint yet", "no committed offset on the target "
                                                                              "and no checkpoint"]


def test_consumers_still_on_the_source_are_noted_not_failed():
    report = assess(facts(source_members=2), NOW, LIMITS)
    assert report.ok and report.notes == ("2 consumer(s) still in the group on the source: these numbers move "
                                          "until they stop",)


def test_old_checkpoint_fails_only_when_behind_the_group():
    old = NOW - 301_000
    current = assess(facts(checkpoint_ms=old), NOW, LIMITS)
    assert current.ok and current.notes == ("checkpoint 301s old but current (the group has not moved since)",)
    behind = assess(facts(checkpoint_ms=old, source_committed=5, from_resume=9), NOW, LIMITS)
    assert not behind.ok and behind.problems[0].startswith("checkpoint 301s old (max 300s) and behind")


@st.composite
def consistent_facts(draw) -> PartitionFacts:
    """Facts a real partition can show: offsets inside the logs, counts no larger than the target's log."""
    start = draw(st.integers(0, 1000))
    end = draw(st.integers(start, start + 1000))
    committed = draw(st.integers(start, end))
    target_end = draw(st.integers(0, 2000))
    sync = None if end == start else draw(st.none() | st.builds(  # a source record's copy
        OffsetSync, st.just("t"), st.just(0), st.integers(start, end - 1), st.integers(0, target_end)))
    after = draw(st.integers(0, target_end))
    target_committed = draw(st.none() | st.integers(0, target_end))
    checkpoint = draw(st.none() | st.builds(Checkpoint, st.just("g"), st.just("source.t"), st.just(0),
                                            st.integers(start, end), st.integers(0, target_end)))
    has_resume = target_committed is not None or checkpoint is not None
    return PartitionFacts("g", "t", 0, "source.t", committed, start, end, target_committed, target_end, checkpoint,
                          None if checkpoint is None else NOW - draw(st.integers(0, 10**6)), sync, after,
                          draw(st.integers(0, target_end)) if has_resume else 0)


@settings(max_examples=300, deadline=None)
@given(consistent_facts())
def test_formulas_stay_within_the_logs_and_add_up(f):
    report = assess(f, NOW, LIMITS)
    assert f.source_log_start <= report.replicated <= f.source_log_end
    assert 0 <= report.not_replicated <= f.source_log_end - f.source_log_start
    if report.resume_offset is None:
        assert report.reread is None and report.skipped == 0
    else:
        assert report.reread is not None and min(report.reread, report.skipped) == 0
        # what the group would read on the target = what it re-reads + what it has not consumed - what it skips
        unconsumed = max(0, report.replicated - f.source_committed)
        assert f.from_resume == report.reread + unconsumed - report.skipped
    assert report.ok == (not report.problems)
    assert (report.loss > LIMITS.max_loss) == any(p.startswith("would lose") for p in report.problems)


@settings(max_examples=200, deadline=None)
@given(consistent_facts(), st.integers(1, 10**6))
def test_each_record_produced_on_the_source_and_not_copied_adds_one_not_replicated(f, more):
    if f.sync is not None:  # what the target holds reaches no further than the source's end
        f = replace(f, after_sync=min(f.after_sync, f.source_log_end - f.sync.upstream - 1))
    else:
        f = replace(f, after_sync=min(f.after_sync, f.source_log_end - f.source_log_start))
    before = assess(f, NOW, LIMITS)
    after = assess(replace(f, source_log_end=f.source_log_end + more), NOW, LIMITS)
    assert after.not_replicated == before.not_replicated + more
    assert not after.ok


@given(st.integers(0, 100), st.integers(0, 100))
def test_replicated_never_goes_below_the_source_log_start(start, after):
    assert replicated_through(OffsetSync("t", 0, 0, 0), after, start, start + 50) >= start


def test_verdict_needs_every_partition_and_at_least_one():
    good, bad = assess(facts(), NOW, LIMITS), assess(facts(source_log_end=11), NOW, LIMITS)
    assert verdict([good]).ok and not verdict([good, bad]).ok
    assert "1 of 2 partition(s) fail (g)" in verdict([good, bad]).reason
    assert not verdict([]).ok and "nothing checked" in verdict([]).reason


FLOW = model_flow("pay", "source", "target")  # the resolved tenancy's flow (tests/tools/scopes.py)


def test_json_output_has_the_documented_shape():
    reports = [assess(facts(), NOW, LIMITS), assess(facts(checkpoint=None, checkpoint_ms=None), NOW, LIMITS)]
    document = json.loads(render.as_json("pay", FLOW, reports, verdict(reports), LIMITS))
    assert set(document) == {"schema", "tenant", "flow", "from", "to", "delivery", "ok", "verdict", "thresholds",
                             "partitions"}
    assert document["schema"] == "mm2gov.failover/v1" and document["ok"] is False
    first, second = document["partitions"]
    assert set(first) == {"group", "topic", "partition", "remote_topic", "source", "checkpoint", "offset_sync",
                          "target", "resume", "replicated", "not_replicated", "skipped", "loss", "reread", "ok",
                          "problems", "notes"}
    assert first["checkpoint"] == {"upstream": 4, "downstream": 1, "age_seconds": 1.0}
    assert first["resume"] == {"offset": 1, "from": "target-committed"} and first["reread"] == 3
    assert second["checkpoint"] is None and second["ok"] is False


def test_text_output_is_a_table_and_a_verdict():
    reports = [assess(facts(), NOW, LIMITS), assess(facts(group="h", source_log_end=12), NOW, LIMITS)]
    out = render.text("pay", FLOW, reports, verdict(reports), LIMITS).splitlines()
    assert out[2].split()[:2] == ["GROUP", "PARTITION"]
    assert out[3].split()[0] == "g" and out[3].endswith("ok")
    assert out[4].split()[0] == "h" and out[4].endswith("FAIL")
    assert "  h t[0]: would lose 2 record(s) (2 not replicated; max-loss 0)" in out
    assert out[-1] == "FAIL: NOT safe to switch: 1 of 2 partition(s) fail (h)"
    assert "read_committed" not in "\n".join(out)
    exactly_once = model_flow("pay", "source", "target", delivery="exactly_once")
    assert "isolation.level=read_committed" in render.text("pay", exactly_once, reports, verdict(reports), LIMITS)
