"""The I/O edge of `mm2gov failover`: the flow from the repo, then offsets, checkpoints and offset syncs
from both clusters as the clusters' admins (`kafka.apply.client_config`). No judgement here (assess.py).

Every broker error is one RuntimeFailure (exit 3) naming the cluster and Kafka's error; a tenant, flow or
group the repo does not give is a ConfigError (exit 2).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition

from governance.compile.mm2 import TOPICS_EXCLUDE
from governance.config.loader import Inventory
from governance.config.regex import java_list_matcher, split_list
from governance.errors import ConfigError, RuntimeFailure
from governance.failover.assess import PartitionFacts, resume
from governance.failover.records import Checkpoint, OffsetSync, RecordFormatError, parse_checkpoint, parse_offset_sync
from governance.kafka import admin as kafka_admin
from governance.kafka.apply import cluster_metadata
from governance.model.names import flow_id, mm2_flow_topics, remote_name

log = logging.getLogger("mm2gov.failover")
TIMEOUT = 30.0
READ_TIMEOUT = 120.0  # to read one partition to its end


@dataclass(frozen=True)
class FlowRef:
    tenant: str
    flow: str
    source: str
    target: str
    topics: tuple[str, ...]
    groups: tuple[str, ...]
    replication_policy: str
    topic_prefixes: tuple[str, ...]  # the tenant's own: a name outside them is never the tenant's,
    group_prefixes: tuple[str, ...]  # whatever a (policy-violating) flow regex says
    delivery: str  # exactly_once: consumers on the target read with read_committed


def find_flow(inventory: Inventory, tenant: str, source: str, target: str) -> FlowRef:
    """The tenant's flow source -> target, as the repo declares it."""
    if tenant not in inventory.tenants:
        raise ConfigError(f"no tenant '{tenant}' in {inventory.root}")
    declared = inventory.tenants[tenant]
    for flow in declared.flows:
        if (flow.source, flow.target) == (source, target):
            return FlowRef(tenant, flow_id(tenant, source, target), source, target, tuple(flow.topics),
                           tuple(flow.groups), flow.replication_policy, tuple(declared.topic_prefixes),
                           tuple(declared.group_prefixes), flow.delivery)
    flows = ", ".join(f"{f.source} -> {f.target}" for f in declared.flows) or "none"
    raise ConfigError(f"tenant '{tenant}' has no flow {source} -> {target} (its flows: {flows})")


def gather(flow: FlowRef, source: dict[str, Any], target: dict[str, Any],
           only_groups: Sequence[str] = ()) -> list[PartitionFacts]:
    """The facts of every (group, partition) the flow's groups committed on the source, within its topics."""
    cluster_metadata(flow.source, source)
    target_topics = cluster_metadata(flow.target, target).topics
    groups = _groups(flow, source, only_groups)
    in_flow = java_list_matcher(flow.topics)
    excluded = java_list_matcher(split_list(TOPICS_EXCLUDE))
    names = mm2_flow_topics(flow.flow)
    with _Reader(flow.target, target) as on_target, _Reader(flow.source, source) as on_source:
        checkpoints = _latest(on_target, names.checkpoints, target_topics, _checkpoint_key, parse_checkpoint)
        syncs = _latest(on_target, names.offset_syncs, target_topics, _sync_key, parse_offset_sync)
        facts = []
        for group in groups:
            committed = _committed(flow.source, source, group)
            members = _members(flow.source, source, group)
            on_b = _committed(flow.target, target, group)
            for (topic, partition), offset in sorted(committed.items()):
                if not (in_flow(topic) and topic.startswith(flow.topic_prefixes)) or excluded(topic):
                    continue
                remote = remote_name(flow.replication_policy, flow.source, topic)
                start, end = on_source.watermarks(topic, partition)
                exists = remote in target_topics and partition in target_topics[remote].partitions
                target_end = on_target.watermarks(remote, partition)[1] if exists else 0
                found = checkpoints.get((group, remote, partition))
                checkpoint, checkpoint_ms = found if found else (None, None)
                sync = syncs.get((topic, partition), (None, None))[0]
                target_committed = on_b.get((remote, partition))
                resume_at, _ = resume(target_committed, checkpoint)
                after = sync.downstream + 1 if sync is not None else 0
                facts.append(PartitionFacts(
                    group, topic, partition, remote, offset, start, end, target_committed, target_end,
                    checkpoint, checkpoint_ms, sync,
                    on_target.count(remote, partition, after) if exists else 0,
                    on_target.count(remote, partition, resume_at) if exists and resume_at is not None else 0,
                    members))
    return facts


def _groups(flow: FlowRef, source: dict[str, Any], only: Sequence[str]) -> list[str]:
    """The consumer groups on the source that the flow's groups filter selects (or those of `only`)."""
    admin = kafka_admin.admin_client(source)
    try:
        listed = admin.list_consumer_groups(request_timeout=TIMEOUT).result(timeout=TIMEOUT)
    except KafkaException as exc:
        raise _failure(flow.source, "list consumer groups", exc) from None
    selects = java_list_matcher(flow.groups)
    groups = sorted({g.group_id for g in listed.valid
                     if selects(g.group_id) and g.group_id.startswith(flow.group_prefixes)})
    unknown = [g for g in only if g not in groups]
    if unknown:
        raise ConfigError(f"group(s) {', '.join(unknown)}: not a consumer group of flow {flow.flow} on "
                          f"{flow.source} (the flow's groups: {', '.join(flow.groups) or 'none'})")
    return [g for g in groups if g in only] if only else groups


def _committed(alias: str, config: dict[str, Any], group: str) -> dict[tuple[str, int], int]:
    admin = kafka_admin.admin_client(config)  # referenced until the answer is in
    future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)],
                                               request_timeout=TIMEOUT)[group]
    try:
        partitions = future.result(timeout=TIMEOUT).topic_partitions or []
    except KafkaException as exc:
        if exc.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND:
            return {}
        raise _failure(alias, f"committed offsets of group {group}", exc) from None
    return {(p.topic, p.partition): p.offset for p in partitions if p.offset >= 0 and p.error is None}


def _members(alias: str, config: dict[str, Any], group: str) -> int:
    """Consumers in the group on the source now (they should be stopped before the switch)."""
    admin = kafka_admin.admin_client(config)
    future = admin.describe_consumer_groups([group], request_timeout=TIMEOUT)[group]
    try:
        return len(future.result(timeout=TIMEOUT).members or [])
    except KafkaException as exc:
        raise _failure(alias, f"describe group {group}", exc) from None


def _checkpoint_key(record: Checkpoint) -> tuple[str, str, int]:
    return record.group, record.topic, record.partition


def _sync_key(record: OffsetSync) -> tuple[str, int]:
    return record.topic, record.partition


def _latest(reader: _Reader, topic: str, existing: dict[str, Any], key: Callable[[Any], tuple],
            parse: Callable[[bytes | None, bytes | None], Any]) -> dict[tuple, tuple[Any, int]]:
    """The last record per key of a compacted MM2 topic, with its timestamp; {} if MM2 has not created it."""
    if topic not in existing:
        return {}
    latest: dict[tuple, tuple[Any, int]] = {}
    for message in reader.read(topic):
        try:
            record = parse(message.key(), message.value())
        except RecordFormatError as exc:  # not MM2's: skip it, loudly
            log.warning("%s: skipping a record at offset %d: %s", topic, message.offset(), exc)
            continue
        latest[key(record)] = (record, message.timestamp()[1])
    return latest


def _failure(alias: str, what: str, exc: KafkaException) -> RuntimeFailure:
    error = exc.args[0]
    name, text = (error.name(), error.str()) if hasattr(error, "name") else (type(exc).__name__, str(exc))
    return RuntimeFailure(f"cluster {alias}: {what}: {name}: {text}")


class _Reader:
    """One read_committed consumer (no group, nothing committed) for watermarks, counts and whole topics."""

    def __init__(self, alias: str, config: dict[str, Any]) -> None:
        self.alias = alias
        self.consumer = Consumer({**config, "group.id": f"mm2gov-failover-{uuid.uuid4().hex[:8]}",
                                  "enable.auto.commit": False, "enable.partition.eof": True,
                                  "isolation.level": "read_committed", "auto.offset.reset": "earliest"},
                                 logger=logging.getLogger("mm2gov.librdkafka"))

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *_: object) -> None:
        self.consumer.close()

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        """(log start, log end) of the partition."""
        try:
            low, high = self.consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=TIMEOUT)
        except KafkaException as exc:
            raise _failure(self.alias, f"offsets of {topic}[{partition}]", exc) from None
        return low, high

    def count(self, topic: str, partition: int, start: int) -> int:
        """Records a read_committed consumer reads from `start` to the partition's end."""
        low, high = self.watermarks(topic, partition)
        if start >= high:  # nothing there; assigning past the end would reset to the start
            return 0
        return sum(1 for _ in self._until_end([TopicPartition(topic, partition, max(start, low))]))

    def read(self, topic: str) -> list[Any]:
        """Every record of the topic, partition by partition, in log order."""
        metadata = self.consumer.list_topics(topic, timeout=TIMEOUT).topics[topic]
        return list(self._until_end([TopicPartition(topic, p, -2) for p in sorted(metadata.partitions)]))

    def _until_end(self, partitions: list[TopicPartition]):
        self.consumer.assign(partitions)
        pending = {(p.topic, p.partition) for p in partitions}
        deadline = time.monotonic() + READ_TIMEOUT
        try:
            while pending:
                if time.monotonic() > deadline:
                    raise RuntimeFailure(f"cluster {self.alias}: timed out reading {sorted(pending)} to its end")
                for message in self.consumer.consume(1000, timeout=1.0):
                    error = message.error()
                    if error is None:
                        yield message
                    elif error.code() == KafkaError._PARTITION_EOF:
                        pending.discard((message.topic(), message.partition()))
                    else:
                        raise RuntimeFailure(f"cluster {self.alias}: reading {message.topic()}: "
                                             f"{error.name()}: {error.str()}")
        finally:
            self.consumer.unassign()
