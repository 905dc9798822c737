"""The tenancy tables from a governance repo: who owns which names, who may do what.

Built from the Inventory alone (no OPA), mirroring what `governance.compile`
derives from the OPA scopes (docs/policies.md) with the same helpers: flow ids,
MM2 principals, internal prefixes and topics, remote names, MM2 scopes and their
pattern types. Grants are kept
only when the built-in policy would keep them (`grant_valid`): an invalid grant
never excuses an access. `tenancy_rows` is pure, so it is tested without Spark.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from pyspark.sql import SparkSession

from governance.compile.acls import (
    mm2_internal_prefix,
    mm2_principal,
    mm2_scope,
    pattern_type,
)
from governance.config.loader import Inventory
from governance.config.schema import EXACTLY_ONCE, Grant, Tenant
from governance.model.names import (
    connect_names,
    flow_id,
    literal_regex,
    mm2_flow_topics,
    probe_principal,
    probe_topic,
    remote_name,
)
from spark_audit.model import TENANCY_SCHEMAS, Tenancy, tenancy_frames


class TenantPrefix(NamedTuple):
    tenant: str
    kind: str  # topic | group
    prefix: str
    cluster: str | None  # None: every cluster
    origin: str  # own | remote | internal
    flow_id: str | None


class PrincipalRow(NamedTuple):
    tenant: str
    principal: str
    role: str  # tenant | mm2 | probe
    flow_id: str | None
    access: tuple[str, ...]


class FlowRow(NamedTuple):
    tenant: str
    flow_id: str
    source: str
    target: str
    replication_policy: str
    topics: tuple[str, ...]
    groups: tuple[str, ...]


class MarkerRow(NamedTuple):
    tenant: str
    header: str
    value: str


class GrantRow(NamedTuple):
    from_tenant: str
    to_tenant: str
    prefix: str
    access: tuple[str, ...]
    cluster: str | None


class ClassificationRow(NamedTuple):
    tenant: str
    classification: str


class ClusterRow(NamedTuple):
    cluster: str
    zone: str


class Mm2ScopeRow(NamedTuple):
    tenant: str
    flow_id: str
    principal: str
    cluster: str
    resource_type: str
    prefix: str
    operations: tuple[str, ...]
    pattern_type: str  # PREFIXED | LITERAL, as compile/acls.py `pattern_type` grants the name


class Mm2TopicRow(NamedTuple):
    tenant: str
    flow_id: str
    cluster: str
    topic: str
    role: str  # offset_syncs | checkpoints | heartbeats | configs | offsets | status


WILDCARD_GRANT_TOPICS = {"*", ".*", "", ".", "-", "_"}


def grant_valid(tenant: Tenant, grant: Grant, tenants: dict[str, Tenant]) -> bool:
    """The built-in policy's `grant_valid`: known receiver, read only, inside the granter's prefixes."""
    return (grant.to in tenants and set(grant.access) <= {"read"}
            and all(topic not in WILDCARD_GRANT_TOPICS and topic.startswith(tuple(tenant.topic_prefixes))
                    for topic in grant.topics))


def tenancy_rows(inventory: Inventory) -> dict[str, list[tuple]]:
    """Every tenancy table as row tuples (see model.TENANCY_SCHEMAS), sorted."""
    rows: dict[str, set[tuple]] = {name: set() for name in TENANCY_SCHEMAS}
    rows["clusters"] = {ClusterRow(alias, cluster.zone) for alias, cluster in inventory.clusters.items()}
    for name, tenant in inventory.tenants.items():
        rows["classifications"].add(ClassificationRow(name, tenant.classification))
        for prefix in tenant.topic_prefixes:
            rows["tenant_prefixes"].add(TenantPrefix(name, "topic", prefix, None, "own", None))
        for prefix in tenant.group_prefixes:
            rows["tenant_prefixes"].add(TenantPrefix(name, "group", prefix, None, "own", None))
        for principal in tenant.principals:
            access = tuple(sorted(set(principal.access)))
            rows["principals"].add(PrincipalRow(name, principal.name, "tenant", None, access))
        if tenant.record_marker is not None:
            rows["markers"].add(MarkerRow(name, tenant.record_marker.header, tenant.record_marker.value))
        for flow in tenant.flows:
            fid = flow_id(name, flow.source, flow.target)
            principal, internal = mm2_principal(fid), mm2_internal_prefix(fid)
            remotes = [remote_name(flow.replication_policy, flow.source, p) for p in tenant.topic_prefixes]
            # an slo flow also replicates the tenant's probe topic (compile/mm2.py topics_items)
            probe = [literal_regex(probe_topic(tenant.topic_prefixes))] if flow.slo else []
            rows["flows"].add(FlowRow(name, fid, flow.source, flow.target, flow.replication_policy,
                                      (*flow.topics, *probe), tuple(flow.groups)))
            if flow.slo:  # the tenant's probe principal (compile/acls.py probe_scope): the tenant's own
                rows["principals"].add(PrincipalRow(name, probe_principal(name), "probe", None, ()))
            rows["principals"].add(PrincipalRow(name, principal, "mm2", fid, ()))
            for prefix in remotes:
                rows["tenant_prefixes"].add(TenantPrefix(name, "topic", prefix, flow.target, "remote", fid))
            for kind in ("topic", "group"):
                rows["tenant_prefixes"].add(TenantPrefix(name, kind, internal, flow.target, "internal", fid))
            # compile/acls.py's own definition: nothing on CLUSTER (it lists every tenant's ACLs and SCRAM users);
            # an exactly-once flow's own transactional ids on its target
            scope = mm2_scope(flow.source, flow.target, fid, tenant.topic_prefixes, tenant.group_prefixes, remotes,
                              exactly_once=flow.delivery == EXACTLY_ONCE)
            for cluster, resource_type, prefixes, operations in scope:
                for prefix in prefixes:
                    rows["mm2_scopes"].add(Mm2ScopeRow(name, fid, principal, cluster, resource_type, prefix,
                                                       tuple(sorted(operations)), pattern_type(prefix)))
            for role, topic in _mm2_topics(fid).items():
                rows["mm2_topics"].add(Mm2TopicRow(name, fid, flow.target, topic, role))
        for grant in tenant.grants:
            if not grant_valid(tenant, grant, inventory.tenants):
                continue
            access = tuple(sorted(set(grant.access)))
            for topic in grant.topics:
                rows["grants"].add(GrantRow(name, grant.to, topic, access, None))
                for flow in tenant.flows:  # the granted names where the tenant's flows copy them
                    rows["grants"].add(GrantRow(name, grant.to, remote_name(flow.replication_policy, flow.source,
                                                                             topic), access, flow.target))
    return {table: sorted(items, key=_sort_key) for table, items in rows.items()}


def _mm2_topics(fid: str) -> dict[str, str]:
    """role -> name of the flow's own MM2 and Connect topics, as names.py names them."""
    connect = dataclasses.asdict(connect_names(fid))
    del connect["group"]
    return {**dataclasses.asdict(mm2_flow_topics(fid)), **connect}


def _sort_key(row: tuple) -> tuple:
    return tuple("" if v is None else str(v) for v in row)


def build_tenancy(spark: SparkSession, inventory: Inventory) -> Tenancy:
    return tenancy_frames(spark, tenancy_rows(inventory))
