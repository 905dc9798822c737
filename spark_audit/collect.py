"""Collect the snapshot tables from live clusters on the driver, with AdminClient.

Metadata is small (topics, ACL bindings, groups and their committed offsets, SCRAM
users, client quotas), so the driver reads it and hands rows to Spark; records are read by Spark's
Kafka source on the executors (`spark_audit.records`). A cluster or table that cannot be
read is recorded in `partial`, never silently left empty: the report then says the
snapshot is partial instead of calling it clean.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException

from governance.config.schema import Cluster
from governance.errors import RuntimeFailure
from governance.kafka import admin as kafka_admin
from governance.kafka.apply import client_config
from governance.kafka.quotas import describe_user_quotas, quota_client
from governance.secrets.store import SecretStore

log = logging.getLogger("mm2gov.audit")
TIMEOUT = 30


@dataclass
class Collected:
    rows: dict[str, list[tuple]] = field(default_factory=lambda: {
        "acls": [], "topics": [], "group_offsets": [], "scram_users": [], "admin_principals": [], "quotas": []})
    partial: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line per gap, for the report


def _reason(exc: Exception) -> str:
    if isinstance(exc, RuntimeFailure):  # already one line naming the cluster and Kafka's error (kafka/quotas.py)
        return str(exc)
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


def _quotas(alias: str, config: dict[str, Any]) -> list[tuple]:
    """Every user quota key (mm2gov's and any other), with kafka/quotas.py (confluent-kafka has no such call)."""
    with quota_client(alias, config) as client:
        live = describe_user_quotas(alias, client)
    return sorted((alias, principal, key, value) for principal, values in live.items() for key, value in values.items())


TABLES: dict[str, Callable[[str, Any], list[tuple]]] = {
    "topics": _topics, "acls": _acls, "scram_users": _scram_users, "group_offsets": _group_offsets}
CONFIG_TABLES: dict[str, Callable[[str, dict[str, Any]], list[tuple]]] = {"quotas": _quotas}  # own connection


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
        readers = {**{table: functools.partial(read, alias, admin) for table, read in TABLES.items()},
                   **{table: functools.partial(read, alias, config) for table, read in CONFIG_TABLES.items()}}
        for table, read in readers.items():
            try:
                rows = read()
            except Exception as exc:  # noqa: BLE001 - e.g. not authorized to describe ACLs
                collected.partial.append(f"{alias}:{table}")
                collected.problems.append(f"cluster {alias}: {table} not collected: {_reason(exc)}")
                progress(f"{alias}: {table} not collected ({_reason(exc)})")
                continue
            collected.rows[table] += rows
            progress(f"{alias}: {len(rows)} {table.replace('_', ' ')}")
    return collected
