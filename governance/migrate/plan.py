"""Which legacy source positions seed which new flow's offsets topic, and what to refuse (pure).

The legacy MM2 replicated every tenant's topics of one source->target pair with one
MirrorSourceConnector, so its offsets topic holds all tenants' positions. Each new flow gets
exactly its own tenant's positions, rewritten to its own offsets topic; anything unclear
(missing, ambiguous, from another alias or connector, outside the tenant's prefixes) is a
refusal, and `migrate` applies nothing while a refusal stands (fail closed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from governance.config.regex import java_list_matcher
from governance.migrate.offsets import SOURCE_CONNECTOR, SourceKey, SourcePosition
from governance.model.names import connect_names

MISSING = "missing"  # the flow replicates a source partition with data the legacy MM2 has no position for
AMBIGUOUS = "ambiguous"  # flows of two tenants take the topic
FOREIGN = "foreign"  # a position of another source alias or connector than the legacy pair's
OUTSIDE = "outside-prefixes"  # the flow's topics regex takes a topic outside its tenant's prefixes
ALIAS = "alias"  # the flow's source alias is not the legacy one: its remote topics would differ
POLICY = "replication-policy"  # the flow names remote topics otherwise than the legacy MM2 did
RETENTION = "below-log-start"  # records after the legacy position are gone from the source (retention)
AHEAD = "beyond-log-end"  # the legacy position is past the source's end: the topic was recreated or truncated
LEGACY_OFFSETS = "missing-legacy-offsets"  # the legacy offsets topic is absent or holds no position (live.py)
RUNNING = "mm2-running"  # the legacy MM2's or a flow's Connect group still has members (live.py)
FLOW_OFFSETS = "flow-offsets-not-empty"  # a flow's own offsets topic already holds other records (live.py)


@dataclass(frozen=True)
class NewFlow:
    """A new per-tenant flow of the legacy pair, as the governance repo declares it."""

    tenant: str
    flow: str
    source: str
    target: str
    topics: tuple[str, ...]  # the flow's `topics` LIST items (Java regexes)
    prefixes: tuple[str, ...]  # the tenant's topic prefixes
    replication_policy: str = "default"  # default | identity (names.remote_name)
    exclude: tuple[str, ...] = ()  # the flow's own `exclude_topics` items: topics it does not replicate

    @property
    def offsets_topic(self) -> str:
        return connect_names(self.flow).offsets


@dataclass(frozen=True, order=True)
class Seed:
    """A position to write to `offsets_topic`, keyed as the flow's own MM2 reads it."""

    offsets_topic: str
    flow: str
    position: SourcePosition


@dataclass(frozen=True, order=True)
class Refusal:
    kind: str
    topic: str
    partition: int | None
    detail: str


@dataclass(frozen=True)
class MigrationPlan:
    seeds: tuple[Seed, ...]
    refusals: tuple[Refusal, ...]
    untaken: tuple[SourcePosition, ...] = field(default=())  # legacy positions no flow takes: reported only
    gone: tuple[SourcePosition, ...] = field(default=())  # positions of topics (partitions) the source no longer has
    lost: tuple[Refusal, ...] = field(default=())  # RETENTION refusals accepted: seeded at the log start instead

    @property
    def ok(self) -> bool:
        return not self.refusals


def _in_prefixes(topic: str, prefixes: Sequence[str]) -> bool:
    return any(prefix and topic.startswith(prefix) for prefix in prefixes)


def _taker(flow: NewFlow) -> Callable[[str], bool]:
    """Whether the flow's MM2 replicates a topic: its topics items, less its own exclusions."""
    takes, excluded = java_list_matcher(flow.topics), java_list_matcher(flow.exclude)
    return lambda topic: takes(topic) and not excluded(topic)


def plan(legacy: Mapping[SourceKey, SourcePosition], legacy_alias: str, flows: Sequence[NewFlow],
         source_partitions: Mapping[str, int] | None = None,
         empty: frozenset[tuple[str, int]] = frozenset(),
         legacy_connector: str = SOURCE_CONNECTOR,
         watermarks: Mapping[tuple[str, int], tuple[int, int]] | None = None,
         legacy_policy: str | None = "default", accept_retention_loss: bool = False) -> MigrationPlan:
    """The seeds and refusals of a cut-over of `flows` from the legacy MM2 of `legacy_alias`.

    `legacy` holds the legacy store's current positions (offsets.latest_positions).
    `source_partitions` (topic -> partition count on the source cluster), when given, makes a
    partition a flow takes without a legacy position a refusal unless it is in `empty` (no
    record to resume from: the flow starts at its beginning, as the legacy MM2 would have).
    `legacy_connector` is the legacy MirrorSourceConnector's name (a Connect-cluster deployment
    names it freely); seeds always carry the name the flow's dedicated MM2 gives it.
    `watermarks` ((topic, partition) -> (log start, log end) on the source) checks each seed
    against the source: a position past the end is refused (AHEAD), one whose next record is
    gone is refused (RETENTION) unless `accept_retention_loss` seeds it at the log start, and
    an empty partition (start == end) needs no position. `legacy_policy` (default | identity,
    None when unknown) must be each flow's: otherwise the flow writes other remote topics.
    With `source_partitions`, positions of topics or partitions the source no longer has are
    not seeded (`gone`): a topic created again later must start at its beginning."""
    positions = sorted(legacy.values())
    refusals: list[Refusal] = []
    lost: list[Refusal] = []
    marks = watermarks or {}
    empty = empty | {key for key, (start, end) in marks.items() if start == end}
    for flow in flows:
        if flow.source != legacy_alias:
            refusals.append(Refusal(ALIAS, "", None, f"flow {flow.flow} reads source '{flow.source}', "
                                    f"the legacy MM2 read '{legacy_alias}'"))
        if flow.replication_policy != legacy_policy:
            refusals.append(Refusal(POLICY, "", None, f"flow {flow.flow} names remote topics by the "
                                    f"'{flow.replication_policy}' policy, the legacy MM2 by "
                                    f"{repr(legacy_policy) if legacy_policy else 'another one'}"))
    kept: list[SourcePosition] = []
    for position in positions:
        if position.connector != legacy_connector or position.cluster != legacy_alias:
            refusals.append(Refusal(FOREIGN, position.topic, position.partition,
                                    f"position of connector '{position.connector}' and source "
                                    f"'{position.cluster}', expected '{legacy_connector}' and '{legacy_alias}'"))
        else:
            kept.append(position)
    matchers = [(flow, _taker(flow)) for flow in flows]
    topics = {p.topic for p in kept} | set(source_partitions or {})
    owner: dict[str, NewFlow] = {}
    for topic in sorted(topics):
        takers = [flow for flow, matches in matchers if matches(topic)]
        if len(takers) > 1:
            refusals.append(Refusal(AMBIGUOUS, topic, None, "taken by flows "
                                    + ", ".join(sorted(flow.flow for flow in takers))))
        elif takers and not _in_prefixes(topic, takers[0].prefixes):
            refusals.append(Refusal(OUTSIDE, topic, None, f"flow {takers[0].flow}'s topics take it, "
                                    f"but tenant {takers[0].tenant}'s prefixes do not"))
        elif takers:
            owner[topic] = takers[0]
    seeds: list[Seed] = []
    untaken: list[SourcePosition] = []
    gone: list[SourcePosition] = []
    for position in kept:
        flow = owner.get(position.topic)
        if flow is None:
            untaken.append(position)
            continue
        if source_partitions is not None and position.partition >= source_partitions.get(position.topic, 0):
            gone.append(position)
            continue
        offset = position.offset
        start, end = marks.get((position.topic, position.partition), (0, position.resumes_at))
        where = (position.topic, position.partition)
        if position.resumes_at > end:
            refusals.append(Refusal(AHEAD, *where, f"the legacy MM2 resumes at {position.resumes_at}, the "
                                    f"source ends at {end}: was the topic deleted and created again?"))
            continue
        if position.resumes_at < start:
            refusal = Refusal(RETENTION, *where, f"records {position.resumes_at}..{start - 1} were deleted "
                              f"from the source (retention) before the legacy MM2 replicated them")
            if not accept_retention_loss:
                refusals.append(refusal)
                continue
            lost.append(refusal)
            offset = start - 1  # resume at the log start, what MM2's consumer would reset to
        rewritten = SourcePosition(SOURCE_CONNECTOR, flow.source, position.topic, position.partition, offset)
        seeds.append(Seed(flow.offsets_topic, flow.flow, rewritten))
    known = {(p.topic, p.partition) for p in kept}
    for topic, count in sorted((source_partitions or {}).items()):
        if topic not in owner:
            continue
        for partition in range(count):
            if (topic, partition) not in known and (topic, partition) not in empty:
                refusals.append(Refusal(MISSING, topic, partition, f"flow {owner[topic].flow} takes it; "
                                        "the legacy offsets hold no position for it"))
    refused = {r.topic for r in refusals if r.kind in (AMBIGUOUS, OUTSIDE)}
    return MigrationPlan(tuple(sorted(seeds)), tuple(sorted(refusals)),
                         tuple(p for p in untaken if p.topic not in refused), tuple(gone), tuple(sorted(lost)))


def describe(migration: MigrationPlan) -> list[str]:
    """The dry run's lines: where each flow resumes per source topic-partition, then what stops it."""
    lines = [f"{seed.flow}: {seed.position.topic}-{seed.position.partition} resumes at source offset "
             f"{seed.position.resumes_at} (seeded into {seed.offsets_topic})" for seed in migration.seeds]
    lines += [f"not migrated (no flow takes it): {p.topic}-{p.partition} at {p.resumes_at}"
              for p in migration.untaken]
    lines += [f"not migrated (no longer on the source): {p.topic}-{p.partition} at {p.resumes_at}"
              for p in migration.gone]
    lines += [f"accepted loss ({r.kind}): {r.topic}-{r.partition}: {r.detail}" for r in migration.lost]
    lines += [f"refused ({r.kind}): {r.topic}" + ("" if r.partition is None else f"-{r.partition}")
              + f": {r.detail}" for r in migration.refusals]
    return lines
