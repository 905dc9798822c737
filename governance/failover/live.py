"""The I/O edge of `mm2gov failover`: the flow from the resolved tenancy, then offsets, checkpoints and offset syncs
from both clusters as the clusters' admins (`kafka.apply.client_config`). No judgement here (assess.py).

Every broker error is one RuntimeFailure (exit 3) naming the cluster and Kafka's error; a tenant, flow or
group the repo does not give is a ConfigError (exit 2).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions

from governance.compile.mm2 import topics_exclude
from governance.config.regex import java_list_matcher, split_list
from governance.errors import ConfigError
from governance.failover.assess import PartitionFacts, resume
from governance.failover.records import Checkpoint, OffsetSync, RecordFormatError, parse_checkpoint, parse_offset_sync
from governance.kafka import admin as kafka_admin
from governance.kafka.apply import cluster_metadata
from governance.kafka.reader import CommittedReader
from governance.model.tenancy import Flow, Tenancy, Tenant

log = logging.getLogger("mm2gov.failover")
TIMEOUT = kafka_admin.TIMEOUT


def find_flow(tenancy: Tenancy, tenant: str, source: str, target: str) -> tuple[Tenant, Flow]:
    """The tenant's flow source -> target, as the policy decided it (the resolved tenancy)."""
    if tenant not in tenancy.tenants:
        raise ConfigError(f"no tenant '{tenant}' in the repo (its tenants: {', '.join(sorted(tenancy.tenants))})")
    decided = tenancy.tenants[tenant]
    for flow in decided.flows:
        if (flow.source, flow.target) == (source, target):
            return decided, flow
    flows = ", ".join(f"{f.source} -> {f.target}" for f in decided.flows) or "none"
    raise ConfigError(f"tenant '{tenant}' has no flow {source} -> {target} (its flows: {flows})")


def gather(tenant: Tenant, flow: Flow, source: dict[str, Any], target: dict[str, Any],
           only_groups: Sequence[str] = ()) -> list[PartitionFacts]:
    """The facts of every (group, partition) the flow's groups committed on the source, within its topics (and
    the tenant's own prefixes: a name outside them is never the tenant's, whatever a flow regex says)."""
    cluster_metadata(flow.source, source)
    target_topics = cluster_metadata(flow.target, target).topics
    groups = _groups(tenant, flow, source, only_groups)
    in_flow = java_list_matcher(flow.topics)
    excluded = java_list_matcher(split_list(topics_exclude(flow.exclude_topics)))
    names = flow.mm2_topics
    with (CommittedReader(flow.target, target, "failover") as on_target,
          CommittedReader(flow.source, source, "failover") as on_source):
        checkpoints = _latest(on_target, names.checkpoints, target_topics, _checkpoint_key, parse_checkpoint)
        syncs = _latest(on_target, names.offset_syncs, target_topics, _sync_key, parse_offset_sync)
        facts = []
        for group in groups:
            committed = _committed(flow.source, source, group)
            members = _members(flow.source, source, group)
            on_b = _committed(flow.target, target, group)
            for (topic, partition), offset in sorted(committed.items()):
                if not (in_flow(topic) and topic.startswith(tenant.topic_prefixes)) or excluded(topic):
                    continue
                remote = flow.remote_name(topic)
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


def _groups(tenant: Tenant, flow: Flow, source: dict[str, Any], only: Sequence[str]) -> list[str]:
    """The consumer groups on the source that the flow's groups filter selects (or those of `only`)."""
    admin = kafka_admin.admin_client(source)
    listed = kafka_admin.answer(admin.list_consumer_groups(request_timeout=TIMEOUT),
                                f"cluster {flow.source}: list consumer groups")
    selects = java_list_matcher(flow.groups)
    groups = sorted({g.group_id for g in listed.valid
                     if selects(g.group_id) and g.group_id.startswith(tenant.group_prefixes)})
    unknown = [g for g in only if g not in groups]
    if unknown:
        raise ConfigError(f"group(s) {', '.join(unknown)}: not a consumer group of flow {flow.id} on "
                          f"{flow.source} (the flow's groups: {', '.join(flow.groups) or 'none'})")
    return [g for g in groups if g in only] if only else groups


def _committed(alias: str, config: dict[str, Any], group: str) -> dict[tuple[str, int], int]:
    admin = kafka_admin.admin_client(config)  # referenced until the answer is in
    future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)],
                                               request_timeout=TIMEOUT)[group]
    listed = kafka_admin.answer(future, f"cluster {alias}: committed offsets of group {group}",
                                ignore=("GROUP_ID_NOT_FOUND",))
    partitions = (listed.topic_partitions or []) if listed is not None else []
    return {(p.topic, p.partition): p.offset for p in partitions if p.offset >= 0 and p.error is None}


def _members(alias: str, config: dict[str, Any], group: str) -> int:
    """Consumers in the group on the source now (they should be stopped before the switch)."""
    admin = kafka_admin.admin_client(config)
    future = admin.describe_consumer_groups([group], request_timeout=TIMEOUT)[group]
    return len(kafka_admin.answer(future, f"cluster {alias}: describe group {group}").members or [])


def _checkpoint_key(record: Checkpoint) -> tuple[str, str, int]:
    return record.group, record.topic, record.partition


def _sync_key(record: OffsetSync) -> tuple[str, int]:
    return record.topic, record.partition


def _latest(reader: CommittedReader, topic: str, existing: dict[str, Any], key: Callable[[Any], tuple],
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
