"""The I/O edge of `mm2gov migrate`: the legacy file and the repo's flows, then the live facts (the legacy
offsets topic, the source's partitions and watermarks, the flows' own offsets topics, which MM2s still
run), then the seeds written and read back. Judgement is pure (`judge`, plan.py); nothing is written
unless the whole judged cut-over stands.

Every cluster is reached as its admin (`kafka.apply.client_config`); a broker error is one
RuntimeFailure (exit 3) naming the cluster, bad input a ConfigError (exit 2).
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from governance.compile.mm2 import REPLICATION_POLICIES, topics_exclude
from governance.config.loader import Inventory
from governance.config.regex import java_list_matcher, split_list
from governance.errors import ConfigError, RuntimeFailure
from governance.importer import legacy_secrets, parse_properties, redact
from governance.kafka import admin as kafka_admin
from governance.kafka.apply import cluster_metadata
from governance.kafka.reader import CommittedReader, kafka_failure
from governance.migrate.offsets import (
    OffsetRecordError,
    RawRecord,
    SourceKey,
    SourcePosition,
    latest_positions,
    offsets_partition,
    parse_record,
    seed_record,
)
from governance.migrate.plan import (
    FLOW_OFFSETS,
    LEGACY_OFFSETS,
    RUNNING,
    MigrationPlan,
    NewFlow,
    Refusal,
    Seed,
    plan,
)
from governance.model.names import connect_names
from governance.model.tenancy import Tenancy

log = logging.getLogger("mm2gov.migrate")
TIMEOUT = 30.0
# Connect's offsets topic as a flow's MM2 would create it: DistributedConfig's offset.storage.partitions
# default (compile/mm2.py sets no other), compacted (KafkaOffsetBackingStore refuses anything else), the
# replication factor compile/mm2.py gives (offset.storage.replication.factor=-1: the broker's default).
OFFSETS_PARTITIONS = 25
OFFSETS_TOPIC_CONFIG = {"cleanup.policy": "compact"}
_POLICY_CLASSES = {
    "org.apache.kafka.connect.mirror.DefaultReplicationPolicy": "default",
    "org.apache.kafka.connect.mirror.IdentityReplicationPolicy": "identity",
    **{cls: name for name, cls in REPLICATION_POLICIES.items()},
}


@dataclass(frozen=True)
class Legacy:
    """What the legacy MM2 file says about one of its pairs (no secret is kept: only these keys are read)."""

    source: str
    target: str
    offsets_topic: str  # its Connect offsets topic on the target
    group: str  # its Connect group on the target
    policy: str | None  # default | identity, None for a policy mm2gov cannot compare
    bootstrap: dict[str, str]
    topics: tuple[str, ...]  # reported only
    groups: tuple[str, ...]  # reported only


def parse_pair(pair: str) -> tuple[str, str]:
    source, arrow, target = pair.partition("->")
    if not arrow or not source.strip() or not target.strip():
        raise ConfigError(f"--pair: expected SOURCE->TARGET (cluster aliases), got '{pair}'")
    return source.strip(), target.strip()


def read_legacy(text: str, pair: str, where: str) -> Legacy:
    """The legacy dedicated MM2's settings for `pair`, as MirrorMakerConfig reads them."""
    source, target = parse_pair(pair)
    # every secret of the file redacted by value (importer.legacy_secrets says why): no message echoes one
    secrets = legacy_secrets(text)
    props = {key: redact(value, secrets) for key, value in parse_properties(text).items()}
    aliases = [a for a in split_list(props.get("clusters", "")) if a]
    for alias in (source, target):
        if alias not in aliases:
            raise ConfigError(f"{where}: cluster alias '{alias}' is not in its clusters= line "
                              f"({', '.join(aliases) or 'none'})")
        if not props.get(f"{alias}.bootstrap.servers", "").strip():
            raise ConfigError(f"{where}: no {alias}.bootstrap.servers")
    if props.get(f"{source}->{target}.enabled", "false").strip().lower() != "true":
        raise ConfigError(f"{where}: {source}->{target}.enabled is not true: the legacy MM2 did not replicate "
                          "this pair")
    scoped = f"{source}->{target}."
    # MirrorMakerConfig.workerConfig: the target's settings, then top-level offset.storage.* over them
    offsets_topic = props.get("offset.storage.topic") or props.get(f"{target}.offset.storage.topic") \
        or f"mm2-offsets.{source}.internal"
    group = props.get(f"{target}.group.id") or f"{source}-mm2"
    policy_class = (props.get(f"{scoped}replication.policy.class") or props.get("replication.policy.class")
                    or "org.apache.kafka.connect.mirror.DefaultReplicationPolicy").strip()
    separator = props.get(f"{scoped}replication.policy.separator", props.get("replication.policy.separator", "."))
    policy = _POLICY_CLASSES.get(policy_class)
    if policy == "default" and separator != ".":
        policy = None
    return Legacy(source, target, offsets_topic.strip(), group.strip(), policy,
                  {a: props[f"{a}.bootstrap.servers"].strip() for a in (source, target)},
                  tuple(t for t in split_list(props.get(f"{scoped}topics", props.get("topics", ".*"))) if t),
                  tuple(g for g in split_list(props.get(f"{scoped}groups", props.get("groups", ".*"))) if g))


def new_flows(inventory: Inventory, tenancy: Tenancy, legacy: Legacy) -> list[NewFlow]:
    """The decided flows of the legacy pair (the resolved tenancy), one per tenant; the repo must point at the
    legacy's clusters."""
    for alias in (legacy.source, legacy.target):
        if alias not in inventory.clusters:
            raise ConfigError(f"{inventory.root}: no cluster '{alias}' in clusters.yaml (the legacy pair's alias)")
        repo = {s.strip() for s in inventory.clusters[alias].bootstrap_servers.split(",")}
        old = {s.strip() for s in legacy.bootstrap[alias].split(",")}
        if not repo & old:
            raise ConfigError(f"cluster '{alias}': the legacy file's bootstrap servers ({legacy.bootstrap[alias]}) "
                              f"and clusters.yaml's ({inventory.clusters[alias].bootstrap_servers}) share no broker")
    flows = [NewFlow(t.tenant, f.id, f.source, f.target, f.topics, t.topic_prefixes, f.replication_policy,
                     tuple(split_list(topics_exclude(f.exclude_topics))))  # its MM2's topics.exclude (compile/mm2.py)
             for t in sorted(tenancy, key=lambda t: t.tenant) for f in t.flows
             if (f.source, f.target) == (legacy.source, legacy.target)]
    if not flows:
        raise ConfigError(f"{inventory.root}: no tenant has a flow {legacy.source} -> {legacy.target}")
    return flows


@dataclass(frozen=True)
class FlowOffsets:
    """A flow's own Connect offsets topic on the target, as found."""

    topic: str
    partitions: int | None  # None: not created yet
    records: int  # records it holds
    positions: Mapping[SourceKey, SourcePosition]  # its MirrorSourceConnector positions (latest wins)
    only_positions: bool  # every record is a MirrorSourceConnector position (none of another connector)


@dataclass(frozen=True)
class Facts:
    legacy_found: bool  # the legacy offsets topic exists
    legacy_records: int
    legacy: Mapping[SourceKey, SourcePosition]
    source_partitions: Mapping[str, int]  # every topic of the source
    watermarks: Mapping[tuple[str, int], tuple[int, int]]  # of the flows' topics' partitions
    flow_offsets: Mapping[str, FlowOffsets]  # by flow id
    members: Mapping[str, int]  # Connect group -> members now (legacy's and every flow's)


@dataclass(frozen=True)
class Migration:
    legacy: Legacy
    flows: tuple[NewFlow, ...]
    facts: Facts
    plan: MigrationPlan
    already: tuple[str, ...]  # flows whose offsets topic holds exactly their seeds: nothing to write

    def pending(self) -> list[Seed]:
        return [s for s in self.plan.seeds if s.flow not in self.already]


def gather(legacy: Legacy, flows: Sequence[NewFlow], source: dict[str, Any], target: dict[str, Any]) -> Facts:
    """Everything the judgement needs, read and nothing written."""
    source_topics = cluster_metadata(legacy.source, source).topics
    target_topics = cluster_metadata(legacy.target, target).topics
    partitions = {name: len(meta.partitions) for name, meta in source_topics.items() if meta.error is None}
    taken = [java_list_matcher(flow.topics) for flow in flows]  # (their exclusions only narrow: plan.py)
    with CommittedReader(legacy.source, source, "migrate") as on_source:
        watermarks = {(name, p): on_source.watermarks(name, p) for name, count in sorted(partitions.items())
                      if any(matches(name) for matches in taken) for p in range(count)}
    with CommittedReader(legacy.target, target, "migrate") as on_target:
        found = legacy.offsets_topic in target_topics
        records = _raw(on_target.read(legacy.offsets_topic)) if found else []
        try:
            positions = latest_positions(records)
        except OffsetRecordError as exc:
            raise RuntimeFailure(f"cluster {legacy.target}: {legacy.offsets_topic}: {exc}") from None
        flow_offsets = {}
        for flow in flows:
            name = flow.offsets_topic
            meta = target_topics.get(name)
            held = _raw(on_target.read(name)) if meta is not None else []
            flow_offsets[flow.flow] = FlowOffsets(name, None if meta is None else len(meta.partitions), len(held),
                                                  *_positions(held))
    groups = [legacy.group, *(connect_names(flow.flow).group for flow in flows)]
    return Facts(found, len(records), positions, partitions, watermarks, flow_offsets,
                 {group: _members(legacy.target, target, group) for group in groups})


def _positions(records: list[RawRecord]) -> tuple[dict[SourceKey, SourcePosition], bool]:
    try:
        return latest_positions(records), all(parse_record(r) is not None for r in records)
    except OffsetRecordError:
        return {}, False


def judge(legacy: Legacy, flows: Sequence[NewFlow], facts: Facts, force: bool = False,
          accept_retention_loss: bool = False) -> Migration:
    """The cut-over plan and every reason to refuse it (pure)."""
    result = plan(facts.legacy, legacy.source, flows, facts.source_partitions, watermarks=facts.watermarks,
                  legacy_policy=legacy.policy, accept_retention_loss=accept_retention_loss)
    refusals = list(result.refusals)
    if not facts.legacy_found or not facts.legacy:
        state = (f"holds no MirrorSourceConnector position ({facts.legacy_records} records)" if facts.legacy_found
                 else "does not exist")
        refusals.append(Refusal(LEGACY_OFFSETS, legacy.offsets_topic, None, f"on cluster {legacy.target} it {state}: "
                                "is --legacy the file the legacy MM2 ran with, and did it ever commit?"))
    for group, members in sorted(facts.members.items()):
        if members:
            who = "the legacy MM2" if group == legacy.group else "a flow's MM2"
            refusals.append(Refusal(RUNNING, group, None, f"{who} still runs ({members} member(s) in Connect group "
                                    f"{group} on {legacy.target}): stop it first; seeds are read once, at start"))
    already = []
    for flow in flows:
        found = facts.flow_offsets[flow.flow]
        mine = {s.position.key: s.position for s in result.seeds if s.flow == flow.flow}
        if not found.records:
            continue
        if found.only_positions and dict(found.positions) == mine:
            already.append(flow.flow)  # a migrate that ran before: writing again would change nothing
        elif not force:
            refusals.append(Refusal(FLOW_OFFSETS, found.topic, None, f"holds {found.records} record(s) that are not "
                                    f"flow {flow.flow}'s seeds: has its MM2 run already? --force overwrites its "
                                    "positions (only while it is stopped)"))
    return Migration(legacy, tuple(flows), facts, replace(result, refusals=tuple(sorted(refusals))), tuple(already))


def write(migration: Migration, target: dict[str, Any]) -> dict[str, int]:
    """Create the flows' offsets topics that are missing, write each seed to the partition Connect's
    producer would choose, then read every topic back and check it holds its seeds. Returns the seeds
    written per offsets topic. Refuses (RuntimeFailure) a plan that has refusals."""
    if not migration.plan.ok:
        raise RuntimeFailure("refusing to write seeds while the plan has refusals")
    alias = migration.legacy.target
    pending = migration.pending()
    existing = {flow.offsets_topic: migration.facts.flow_offsets[flow.flow].partitions for flow in migration.flows}
    missing = sorted({s.offsets_topic for s in pending if existing[s.offsets_topic] is None})
    admin = kafka_admin.admin_client(target)
    for name in missing:
        kafka_admin.create_topics(admin, [name], partitions=OFFSETS_PARTITIONS, replication_factor=-1,
                                  exist_ok=False, config=OFFSETS_TOPIC_CONFIG)
        log.info("%s: created %s (%d partitions, compacted)", alias, name, OFFSETS_PARTITIONS)
    counts = {name: n for name, n in existing.items() if n is not None} | _created(alias, target, missing)
    failures: list[str] = []

    def delivered(err: KafkaError | None, _msg: Message) -> None:
        if err:
            failures.append(f"{err.name()}: {err.str()}")

    producer = Producer({**target, "enable.idempotence": True, "acks": "all", "message.timeout.ms": 60000},
                        logger=logging.getLogger("mm2gov.librdkafka"))
    for seed in pending:
        key, value = seed_record(seed.position)
        producer.produce(seed.offsets_topic, key=key, value=value,
                         partition=offsets_partition(key, counts[seed.offsets_topic]), on_delivery=delivered)
        producer.poll(0)
    left = producer.flush(90)
    if failures or left:
        raise RuntimeFailure(f"cluster {alias}: {len(failures) + left} of {len(pending)} seeds not written "
                             f"({failures[0] if failures else 'timed out'}); do not start the flows: run "
                             "migrate --apply --force again (the seeds are the same, the latest wins)")
    written: dict[str, int] = {}
    with CommittedReader(alias, target, "migrate") as on_target:
        for name in sorted({s.offsets_topic for s in pending}):
            try:
                held = latest_positions(_raw(on_target.read(name)))
            except OffsetRecordError as exc:  # a record --force wrote over: say which, never a traceback
                raise RuntimeFailure(f"cluster {alias}: {name} read back with a record that is not Connect's "
                                     f"({exc}); the seeds were written: check the topic before starting its "
                                     "flow") from None
            wrong = [s for s in pending if s.offsets_topic == name and held.get(s.position.key) != s.position]
            if wrong:
                raise RuntimeFailure(f"cluster {alias}: {name} read back without {len(wrong)} of its seeds "
                                     f"(e.g. {wrong[0].position.topic}-{wrong[0].position.partition}); "
                                     "do not start its flow")
            written[name] = sum(1 for s in pending if s.offsets_topic == name)
    return written


def _created(alias: str, target: dict[str, Any], names: list[str]) -> dict[str, int]:
    """The partition counts of topics just created, once the metadata the producer reads has them."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        topics = cluster_metadata(alias, target).topics
        found = {n: len(topics[n].partitions) for n in names if n in topics and topics[n].error is None}
        if len(found) == len(names):
            return found
        if time.monotonic() > deadline:
            raise RuntimeFailure(f"cluster {alias}: {sorted(set(names) - set(found))} created but not in its "
                                 "metadata; nothing was written, run migrate --apply again")
        time.sleep(0.5)


def _raw(messages: list[Any]) -> list[RawRecord]:
    return [RawRecord(m.partition(), m.offset(), m.key(), m.value()) for m in messages]


def _members(alias: str, config: dict[str, Any], group: str) -> int:
    """Members of a Connect group now (0 when it has none or does not exist). A Connect group is not a
    consumer group, which describe_consumer_groups refuses; DescribeGroups through list_groups answers."""
    admin = kafka_admin.admin_client(config)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            found = admin.list_groups(group, timeout=TIMEOUT)
    except KafkaException as exc:
        raise kafka_failure(alias, f"describe group {group}", exc) from None
    return sum(len(g.members or []) for g in found if g.id == group)
