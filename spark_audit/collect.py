"""Collect the snapshot tables from live clusters on the driver, with AdminClient.

Metadata is small (topics, ACL bindings, groups and their committed offsets, SCRAM
users), so the driver reads it and hands rows to Spark; records are read by Spark's
Kafka source on the executors (`spark_audit.records`). A cluster or table that cannot be
read is recorded in `partial`, never silently left empty: the report then says the
snapshot is partial instead of calling it clean.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException

from governance.config.schema import Cluster
from governance.errors import RuntimeFailure
from governance.kafka import admin as kafka_admin
from governance.kafka.apply import client_config
from governance.secrets.store import SecretStore

log = logging.getLogger("mm2gov.audit")
TIMEOUT = 30


@dataclass
class Collected:
    rows: dict[str, list[tuple]] = field(default_factory=lambda: {
        "acls": [], "topics": [], "group_offsets": [], "scram_users": [], "admin_principals": []})
    partial: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line per gap, for the report


def _reason(exc: Exception) -> str:
    error = exc.args[0] if exc.args else None
    return f"{error.name()}: {error.str()}" if hasattr(error, "name") else type(exc).__name__


def _topics(alias: str, admin: Any) -> list[tuple]:
    metadata = admin.list_topics(timeout=TIMEOUT)
    return sorted((alias, name, len(topic.partitions)) for name, topic in metadata.topics.items())


def _acls(alias: str, admin: Any) -> list[tuple]:
    return sorted((alias, b.principal, b.host, b.operation, b.permission, b.resource_type, b.resource_name,
                   b.pattern_type) for b in kafka_admin.describe_acls(admin))


def _scram_users(alias: str, admin: Any) -> list[tuple]:
    return sorted((alias, user) for user in kafka_admin.scram_users(admin))


def _group_offsets(alias: str, admin: Any) -> list[tuple]:
    listed = admin.list_consumer_groups(request_timeout=TIMEOUT).result()
    groups = sorted(g.group_id for g in listed.valid)
    rows: list[tuple] = []
    for group in groups:  # one request per group: the admin API takes one group per call
        future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)],
                                                   request_timeout=TIMEOUT)[group]
        for tp in future.result().topic_partitions or []:
            if tp.error is None and tp.offset >= 0:
                rows.append((alias, group, tp.topic, tp.partition, tp.offset))
    return rows


TABLES: dict[str, Callable[[str, Any], list[tuple]]] = {
    "topics": _topics, "acls": _acls, "scram_users": _scram_users, "group_offsets": _group_offsets}


def collect(clusters: dict[str, Cluster], store: SecretStore, progress: Callable[[str], None] = log.info) -> Collected:
    """Every table from every cluster; an unreachable cluster or a refused table is marked partial."""
    collected = Collected()
    for alias, cluster in sorted(clusters.items()):
        try:
            config = client_config(alias, cluster, store)
            if kafka_admin.refused_everywhere(config["bootstrap.servers"]):
                raise RuntimeFailure("every bootstrap server refused the connection")
            admin = kafka_admin.admin_client(config)
            admin.list_topics(timeout=15)
        except Exception as exc:  # noqa: BLE001 - unreachable, refused, missing secret: the cluster is a gap
            reason = str(exc) if not isinstance(exc, KafkaException) else _reason(exc)
            collected.partial.append(alias)
            collected.problems.append(f"cluster {alias} ({cluster.bootstrap_servers}) not collected: {reason}")
            progress(f"{alias}: unreachable ({reason})")
            continue
        if config.get("sasl.username"):  # the audit's own principal is not a finding
            collected.rows["admin_principals"].append((alias, f"User:{config['sasl.username']}"))
        for table, read in TABLES.items():
            try:
                rows = read(alias, admin)
            except Exception as exc:  # noqa: BLE001 - e.g. not authorized to describe ACLs
                collected.partial.append(f"{alias}:{table}")
                collected.problems.append(f"cluster {alias}: {table} not collected: {_reason(exc)}")
                progress(f"{alias}: {table} not collected ({_reason(exc)})")
                continue
            collected.rows[table] += rows
            progress(f"{alias}: {len(rows)} {table.replace('_', ' ')}")
    return collected
