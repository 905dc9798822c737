"""Bring live clusters to the desired state: snapshot, reconcile, execute. Thin I/O around reconcile()."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from governance.compile.desired import DesiredState
from governance.config.schema import Cluster
from governance.errors import RuntimeFailure
from governance.kafka import admin as kafka_admin
from governance.kafka import api_versions, ownership, quotas, version
from governance.kafka.reconcile import ClusterChanges, ClusterSnapshot, reconcile
from governance.model.acl import UNKNOWN
from governance.secrets.issue import scram_doc
from governance.secrets.names import CA_CERT_KEY, PASSWORD_KEY, USERNAME_KEY, scram_secret, user_name
from governance.secrets.store import SecretStore
from governance.secrets.values import random_password

log = logging.getLogger("mm2gov.apply")


def client_config(alias: str, cluster: Cluster, store: SecretStore) -> dict[str, Any]:
    """confluent-kafka settings for the cluster's admin, credentials from the secret store."""
    security = cluster.security
    config: dict[str, Any] = {"bootstrap.servers": cluster.bootstrap_servers,
                              "security.protocol": security.protocol}
    if security.protocol.startswith("SASL"):
        if not security.admin_credentials_secret:
            raise RuntimeFailure(f"cluster {alias}: admin_credentials_secret is needed to apply or audit")
        name = security.admin_credentials_secret
        config.update({"sasl.mechanism": security.sasl_mechanism,
                       "sasl.username": store.get(name, USERNAME_KEY).reveal(),
                       "sasl.password": store.get(name, PASSWORD_KEY).reveal()})
    if security.protocol.endswith("SSL"):
        config["ssl.endpoint.identification.algorithm"] = "https"
        if security.ca_secret:
            config["ssl.ca.pem"] = store.get(security.ca_secret, CA_CERT_KEY).reveal()
    return config


def cluster_metadata(alias: str, config: dict[str, Any], admin=None):
    """The cluster's metadata; an unreachable cluster is one clear RuntimeFailure (at once when every bootstrap
    server refuses the connection)."""
    if admin is None and kafka_admin.refused_everywhere(config["bootstrap.servers"]):
        raise RuntimeFailure(f"cluster {alias} ({config['bootstrap.servers']}) unreachable: every bootstrap "
                             "server refused the connection")
    try:
        return (admin or kafka_admin.admin_client(config)).list_topics(timeout=15)
    except Exception as exc:  # noqa: BLE001 - unreachable, refused or timed out: one message
        raise RuntimeFailure(f"cluster {alias} ({config['bootstrap.servers']}) unreachable: "
                             f"{_reason(exc)}") from None


def snapshot(alias: str, config: dict[str, Any]) -> ClusterSnapshot:
    admin = kafka_admin.admin_client(config)
    metadata = cluster_metadata(alias, config, admin)
    with quotas.quota_client(alias, config) as client:
        supported = quotas.supports_quotas(client)
        live_quotas = quotas.describe_user_quotas(alias, client) if supported else {}
    return ClusterSnapshot(alias, frozenset(kafka_admin.describe_acls(admin)),
                           frozenset(kafka_admin.scram_users(admin)), frozenset(ownership.read_owned(config)),
                           frozenset(metadata.topics), live_quotas, supported)


def _reason(exc: Exception) -> str:
    error = exc.args[0] if exc.args else None
    return f"{error.name()}: {error.str()}" if hasattr(error, "name") else type(exc).__name__


def plan_cluster(alias: str, state: DesiredState, config: dict[str, Any],
                 topics: dict[str, int] | None = None) -> tuple[ClusterChanges, ClusterSnapshot]:
    desired = set(state.bindings.get(alias, set()))
    principals = state.scram_users().get(alias, set())
    live = snapshot(alias, config)
    wanted = state.quotas.get(alias, {})
    if wanted and not live.quotas_supported:
        raise RuntimeFailure(f"cluster {alias}: its brokers do not support client quotas (DescribeClientQuotas and "
                             f"AlterClientQuotas, Kafka 2.6+, KIP-546), and the repo sets {len(wanted)} there")
    return reconcile(alias, desired, principals, live, topics, wanted), live


def source_partitions(state: DesiredState, configs: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    """target -> {remote topic: partitions of its source topic}, for source topics that exist."""
    wanted: dict[str, dict[str, int]] = {}
    by_source: dict[str, list] = {}
    for topic in state.topics:
        by_source.setdefault(topic.source, []).append(topic)
    for source, topics in by_source.items():
        metadata = cluster_metadata(source, configs[source])
        for topic in topics:
            found = metadata.topics.get(topic.source_topic)
            if found is not None and found.error is None:
                wanted.setdefault(topic.target, {})[topic.name] = len(found.partitions)
    return wanted


def issue_passwords(changes: ClusterChanges, store: SecretStore, principal_tenants: dict[str, str]) -> None:
    """A random password, into the store, for each user the cluster will register that has none yet: done for
    every cluster before any is changed, so a store that cannot be written stops apply with nothing changed
    (a password issued for a run that stops later is the one the next run registers)."""
    for principal in changes.create_users:
        secret = scram_secret(changes.cluster, principal)
        if store.get_optional(secret, PASSWORD_KEY) is None:
            store.write(scram_doc(changes.cluster, principal, principal_tenants.get(principal), random_password()))
            log.debug("issued a SCRAM password for %s on %s into secret %s", principal, changes.cluster, secret)


def execute(alias: str, changes: ClusterChanges, live: ClusterSnapshot, principals: set[str],
            config: dict[str, Any], store: SecretStore, mechanism: str, batch_size: int = 1000) -> None:
    """Run the changes: widen ownership, remove ACLs and users, register users (their passwords issued by
    `issue_passwords`) and topics, set and remove client quotas, add ACLs, narrow ownership. Re-running
    converges."""
    admin = kafka_admin.admin_client(config)
    began = time.perf_counter()
    ownership.ensure_topic(admin)
    ownership.write_owned(config, set(live.owned_principals) | principals)
    kafka_admin.delete_acls(admin, changes.delete_acls, batch_size)
    kafka_admin.delete_scram_users(admin, [user_name(p) for p in changes.delete_users], mechanism)
    changes.seconds["remove"] = time.perf_counter() - began
    log.info("%s: removed %d ACLs and %d users in %.1fs", alias, len(changes.delete_acls), len(changes.delete_users),
             changes.seconds["remove"])
    began = time.perf_counter()
    passwords = {user_name(p): store.get(scram_secret(alias, p), PASSWORD_KEY) for p in changes.create_users}
    kafka_admin.upsert_scram_users(admin, passwords, mechanism)
    for name, partitions in changes.create_topics:
        kafka_admin.create_topics(admin, [name], partitions=partitions, replication_factor=-1)
    changes.seconds["users"] = time.perf_counter() - began
    log.info("%s: registered %d SCRAM users in %.1fs", alias, len(passwords), changes.seconds["users"])
    began = time.perf_counter()
    if changes.quotas:  # before the new ACLs: a principal gains access only once its quota holds
        with quotas.quota_client(alias, config) as client:
            quotas.alter_user_quotas(alias, client, changes.quotas)
        log.info("%s: set or removed %d client quotas", alias, len(changes.quotas))
    kafka_admin.create_acls(admin, changes.create_acls, batch_size)
    changes.seconds["acls"] = time.perf_counter() - began
    log.info("%s: created %d ACLs in %.1fs", alias, len(changes.create_acls), changes.seconds["acls"])
    ownership.write_owned(config, principals)


def apply_state(state: DesiredState, clusters: dict[str, Cluster], store: SecretStore,
                dry_run: bool = False, batch_size: int = 1000) -> list[ClusterChanges]:
    """Reconcile every cluster, clusters in parallel (each its own AdminClient and order).

    Every cluster is reached and planned, and its quota changes validated by its brokers, before any is
    changed: an unreachable cluster, a missing admin secret or a refused quota stops the run with nothing
    applied anywhere.
    """
    aliases = sorted(clusters)
    with ThreadPoolExecutor(max_workers=max(len(aliases), 1), thread_name_prefix="mm2gov-apply") as pool:
        configs = {alias: client_config(alias, clusters[alias], store) for alias in aliases}
        metadata = {alias: cluster_metadata(alias, configs[alias]) for alias in aliases}  # reachable? (first)
        # can the pinned MM2 serve every flow's clusters? (broker versions, before anything changes)
        for verdict in api_versions.check_flows([(flow.source, flow.target) for flow in state.flows], configs,
                                           {alias: [f"{b.host}:{b.port}" for b in found.brokers.values()]
                                            for alias, found in metadata.items()}):
            log.info("%s", verdict.line())
        topics = source_partitions(state, configs)
        planned = list(pool.map(lambda alias: plan_cluster(alias, state, configs[alias], topics.get(alias)), aliases))
        for changes, _ in planned:
            log.info("%s: %d to delete, %d to create, %d users to delete, %d to create, %d foreign bindings, "
                     "%d client quotas to change", changes.cluster, len(changes.delete_acls), len(changes.create_acls),
                     len(changes.delete_users), len(changes.create_users), len(changes.foreign), len(changes.quotas))
        if not dry_run:
            refuse_unnamed_deletions([changes for changes, _ in planned])
            # would the brokers take every quota? (validate_only, before anything changes anywhere; not on a dry
            # run or drift, which only read and may run with an admin that can read but not alter)
            list(pool.map(lambda changes: validate_quotas(changes, configs[changes.cluster]),
                          [changes for changes, _ in planned if changes.quotas]))
            list(pool.map(lambda changes: check_rights(changes, configs[changes.cluster]),
                          [changes for changes, _ in planned]))
            for changes, _ in planned:
                issue_passwords(changes, store, state.principal_tenants)
            futures = [pool.submit(_execute_cluster, alias, clusters[alias], changes, live, state, configs[alias],
                                   store, batch_size)
                       for alias, (changes, live) in zip(aliases, planned, strict=True) if changes.count]
            for future in futures:
                future.result()
    return [changes for changes, _ in planned]


def refuse_unnamed_deletions(planned: Iterable[ClusterChanges]) -> None:
    """Stop before any change when a binding to remove has a field this client cannot name (UNKNOWN, e.g. a
    delegation-token ACL: resource type USER, operation CREATE_TOKENS). A delete filter must match exactly the
    one binding, and librdkafka can only widen an unnamed field to ANY, which would also remove bindings that
    are wanted; so such a binding is for Kafka's own kafka-acls.sh, and apply says which."""
    unnamed = [(changes.cluster, b) for changes in planned for b in changes.delete_acls
               if UNKNOWN in (b.resource_type, b.pattern_type, b.operation, b.permission)]
    if unnamed:
        cluster, first = unnamed[0]
        raise RuntimeFailure(
            f"cluster {cluster}: {len(unnamed)} ACL(s) to remove have a resource type or operation this Kafka "
            f"client cannot name (UNKNOWN), e.g. {first.principal!r} {first.operation} {first.resource_type} "
            f"{first.pattern_type} {first.resource_name!r}; remove them with Kafka's kafka-acls.sh --remove, then "
            "run apply again. Nothing was changed")


def check_rights(changes: ClusterChanges, config: dict[str, Any]) -> None:
    """Stop before any change when the brokers say the cluster's admin may not ALTER the cluster, which
    creating and deleting ACLs and SCRAM users takes: otherwise the clusters before it would be changed and
    it would fail half-way. Quotas have their own check (validate_quotas)."""
    if changes.create_acls or changes.delete_acls or changes.create_users or changes.delete_users:
        allowed = kafka_admin.cluster_operations(kafka_admin.admin_client(config))
        kafka_admin.check_alter(changes.cluster, allowed, "changing ACLs and SCRAM users")


def validate_quotas(changes: ClusterChanges, config: dict[str, Any]) -> None:
    """The brokers' verdict on the cluster's quota changes, nothing changed (AlterClientQuotas validate_only): a
    refused quota stops apply before any cluster is touched."""
    with quotas.quota_client(changes.cluster, config) as client:
        quotas.alter_user_quotas(changes.cluster, client, changes.quotas, validate_only=True)


def scram_mechanism(cluster: Cluster) -> str:
    """The SCRAM mechanism mm2gov registers its users' credentials under on the cluster (apply, rotate): the
    cluster's own, SCRAM-SHA-512 where it names none or PLAIN (SCRAM credentials are what mm2gov registers)."""
    mechanism = cluster.security.sasl_mechanism
    return "SCRAM-SHA-512" if mechanism in (None, "PLAIN") else mechanism


def _execute_cluster(alias: str, cluster: Cluster, changes: ClusterChanges, live: ClusterSnapshot,
                     state: DesiredState, config: dict[str, Any], store: SecretStore, batch_size: int) -> None:
    execute(alias, changes, live, state.scram_users().get(alias, set()), config, store, scram_mechanism(cluster),
            batch_size)


def cluster_report(clusters: Mapping[str, Any], pairs: Iterable[tuple[str, str]],
                   store: Any) -> list[version.Verdict]:
    """Every cluster's version and verdict, for `mm2gov doctor --repo`: each flow cluster in its roles, a
    cluster in no flow in both (it may become one). Unreachable clusters fail as apply would."""
    pairs = list(pairs)
    roles = {(s, "source") for s, _ in pairs} | {(t, "target") for _, t in pairs}
    roles |= {(alias, role) for alias in clusters if not any(alias == c for c, _ in roles) for role in version.ROLES}
    evidence = {}
    for alias in sorted(clusters):
        config = client_config(alias, clusters[alias], store)
        metadata = cluster_metadata(alias, config)
        brokers = [f"{b.host}:{b.port}" for b in metadata.brokers.values()]
        evidence[alias] = api_versions.read_cluster(alias, config, brokers)
    return [version.judge(alias, role, evidence[alias]) for alias, role in sorted(roles)]
