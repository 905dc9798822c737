"""What switching a tenant's consumer groups from the flow's source to its target would do now: pure
functions over the facts live.py gathers, one partition of one group at a time.

Per (group, source partition) with S = the source, T = the target:

- resume on T = the group's committed offset on T (MM2 syncs it, `sync.group.offsets.enabled`), else the
  checkpoint's downstream offset, else none (the consumer would follow `auto.offset.reset`);
- replicated = the next source offset MM2 has copied up to: the latest offset sync (u -> d) says source
  record u is target record d, and every record on T after d is the copy of one later source record, so
  replicated = u + 1 + (records on T after d). Records are counted (read_committed), never offsets, since
  an exactly-once flow's transaction markers take offsets on T. Without a sync: S's log start + records
  on T. Capped at S's log end (duplicates from an MM2 restart copy nothing new);
- not replicated = S's log end - replicated: records that would be missing on T if S were lost now;
- the group has not consumed, and T holds, max(0, replicated - committed on S) records (its lag on T);
  T holds `from_resume` records from the resume offset on, so
  re-read = max(0, from_resume - that), the records the group consumed on S and would read again, and
  skipped = max(0, that - from_resume), records the group has not consumed but would jump over on T
  (a resume offset ahead of the group, e.g. after the group was rewound on S).

Assumptions: source offsets are dense between the sync and the log end (no transaction markers or
compaction on S in that range; each source record is one target record), and the partition has one copy
on T per source record after the sync. A loss is `not replicated + skipped`; both thresholds are per
partition.

MM2 emits a checkpoint only when the group's offset or its translation moves, so an idle group's last
checkpoint ages while staying right: an old checkpoint fails only when it is also behind the group's
committed offset on S.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from governance.failover.records import Checkpoint, OffsetSync


@dataclass(frozen=True)
class Thresholds:
    max_loss: int = 0
    max_reread: int = 1000
    max_checkpoint_age: float = 300.0  # seconds


@dataclass(frozen=True)
class PartitionFacts:
    """What the clusters say about one partition of one group: offsets and counts, no judgement."""

    group: str
    topic: str
    partition: int
    remote_topic: str
    source_committed: int
    source_log_start: int
    source_log_end: int
    target_committed: int | None
    target_log_end: int
    checkpoint: Checkpoint | None
    checkpoint_ms: int | None  # the checkpoint record's timestamp
    sync: OffsetSync | None  # the flow's latest offset sync of this source partition
    after_sync: int  # records on the target after the sync's downstream offset (all of them without a sync)
    from_resume: int  # records on the target from the resume offset on (0 without a resume offset)
    source_members: int = 0  # consumers in the group on the source now


@dataclass(frozen=True)
class PartitionReport:
    facts: PartitionFacts
    resume_offset: int | None
    resume_from: str  # "target-committed" | "checkpoint" | "auto.offset.reset"
    checkpoint_age: float | None  # seconds
    replicated: int
    not_replicated: int
    skipped: int
    reread: int | None
    problems: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def loss(self) -> int:
        return self.not_replicated + self.skipped


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str


def resume(target_committed: int | None, checkpoint: Checkpoint | None) -> tuple[int | None, str]:
    """Where a consumer of the group starts on the target, and why."""
    if target_committed is not None:
        return target_committed, "target-committed"
    if checkpoint is not None:
        return checkpoint.downstream, "checkpoint"
    return None, "auto.offset.reset"


def replicated_through(sync: OffsetSync | None, after_sync: int, log_start: int, log_end: int) -> int:
    """The next source offset the target has no copy of (module docstring)."""
    start = sync.upstream + 1 if sync is not None else log_start
    return min(max(start + after_sync, log_start), log_end)


def assess(facts: PartitionFacts, now_ms: int, limits: Thresholds) -> PartitionReport:
    offset, source = resume(facts.target_committed, facts.checkpoint)
    replicated = replicated_through(facts.sync, facts.after_sync, facts.source_log_start, facts.source_log_end)
    not_replicated = facts.source_log_end - replicated
    unconsumed = max(0, replicated - facts.source_committed)
    reread = None if offset is None else max(0, facts.from_resume - unconsumed)
    skipped = 0 if offset is None else max(0, unconsumed - facts.from_resume)
    age = None if facts.checkpoint_ms is None else max(0.0, (now_ms - facts.checkpoint_ms) / 1000)
    problems: list[str] = []
    notes: list[str] = []
    checkpoint = facts.checkpoint
    if checkpoint is None:
        problems.append("no checkpoint yet: MM2 has not translated this group's offset")
    elif age is not None and age > limits.max_checkpoint_age:
        if checkpoint.upstream != facts.source_committed:
            problems.append(f"checkpoint {age:.0f}s old (max {limits.max_checkpoint_age:g}s) and behind the "
                            f"group on the source ({checkpoint.upstream} != {facts.source_committed})")
        else:
            notes.append(f"checkpoint {age:.0f}s old but current (the group has not moved since)")
    if facts.source_members:
        notes.append(f"{facts.source_members} consumer(s) still in the group on the source: these numbers move "
                     "until they stop")
    if offset is None:
        problems.append("no committed offset on the target and no checkpoint: a consumer would start "
                        "from auto.offset.reset")
    if not_replicated + skipped > limits.max_loss:
        why = [f"{not_replicated} not replicated"] if not_replicated else []
        why += [f"{skipped} skipped by the resume offset"] if skipped else []
        problems.append(f"would lose {not_replicated + skipped} record(s) ({', '.join(why)}; "
                        f"max-loss {limits.max_loss})")
    if reread is not None and reread > limits.max_reread:
        problems.append(f"would re-read {reread} record(s) (max-reread {limits.max_reread})")
    return PartitionReport(facts, offset, source, age, replicated, not_replicated, skipped, reread,
                           tuple(problems), tuple(notes))


def verdict(reports: Iterable[PartitionReport]) -> Verdict:
    """Safe to switch only when at least one partition was checked and every one is within the limits."""
    reports = list(reports)
    if not reports:
        return Verdict(False, "nothing checked: no consumer group of the flow has committed offsets on its "
                              "topics on the source")
    failing = [r for r in reports if not r.ok]
    if failing:
        groups = sorted({r.facts.group for r in failing})
        return Verdict(False, f"NOT safe to switch: {len(failing)} of {len(reports)} partition(s) fail "
                              f"({', '.join(groups)})")
    return Verdict(True, f"safe to switch: {len(reports)} partition(s) of "
                         f"{len({r.facts.group for r in reports})} group(s) within the limits")
