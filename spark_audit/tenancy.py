"""The tenancy tables from the resolved tenancy: who owns which names, who may do what.

Built from `governance.model.tenancy` (the policy decision, parsed once), as compile is: the flows, their
exclusions, the home clusters and the grants the policy kept (an invalid grant is not in the decision, so
it never excuses an access), with every name from `governance.model.names`. Only the clusters' zones come
from clusters.yaml. `tenancy_rows` is pure, so it is tested without Spark.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, NamedTuple

from pyspark.sql import SparkSession

from governance.compile.acls import mm2_scope, pattern_type
from governance.compile.quotas import desired_quotas
from governance.config.schema import Cluster
from governance.model import tenancy as resolved
from spark_audit.model import TENANCY_SCHEMAS, Tenancy, tenancy_frames

Row = tuple[Any, ...]  # one row of a tenancy table (the NamedTuples below)


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
    exclude_topics: tuple[str, ...]
    exclude_groups: tuple[str, ...]


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


class QuotaRow(NamedTuple):
    tenant: str
    principal: str
    cluster: str
    key: str  # producer_byte_rate | consumer_byte_rate | request_percentage (model/quota.py QUOTA_KEYS)
    value: float


def tenancy_rows(tenancy: resolved.Tenancy, clusters: Mapping[str, Cluster]) -> dict[str, list[Row]]:
    """Every tenancy table as row tuples (see model.TENANCY_SCHEMAS), sorted."""
    rows: dict[str, set[Row]] = {name: set() for name in TENANCY_SCHEMAS}
    rows["clusters"] = {ClusterRow(alias, cluster.zone) for alias, cluster in clusters.items()}
    for tenant in tenancy:
        name = tenant.tenant
        rows["classifications"].add(ClassificationRow(name, tenant.classification))
        for prefix in tenant.topic_prefixes:
            rows["tenant_prefixes"].add(TenantPrefix(name, "topic", prefix, None, "own", None))
        for prefix in tenant.group_prefixes:
            rows["tenant_prefixes"].add(TenantPrefix(name, "group", prefix, None, "own", None))
        for principal in tenant.principals:
            rows["principals"].add(PrincipalRow(name, principal.name, "tenant", None, tuple(sorted(principal.access))))
        if tenant.record_marker is not None:
            rows["markers"].add(MarkerRow(name, tenant.record_marker.header, tenant.record_marker.value))
        if tenant.probe_principal:  # the tenant's own (compile/acls.py probe_scope)
            rows["principals"].add(PrincipalRow(name, tenant.probe_principal, "probe", None, ()))
        for flow in tenant.flows:
            # an slo flow also replicates the tenant's probe topic (Flow.topic_items, as compile/mm2.py)
            rows["flows"].add(FlowRow(name, flow.id, flow.source, flow.target, flow.replication_policy,
                                      flow.topic_items, flow.groups, flow.exclude_topics, flow.exclude_groups))
            rows["principals"].add(PrincipalRow(name, flow.mm2_principal, "mm2", flow.id, ()))
            for prefix in flow.remote_topic_prefixes:
                rows["tenant_prefixes"].add(TenantPrefix(name, "topic", prefix, flow.target, "remote", flow.id))
            for kind in ("topic", "group"):
                rows["tenant_prefixes"].add(TenantPrefix(name, kind, flow.internal_prefix, flow.target, "internal",
                                                         flow.id))
            # compile/acls.py's own definition: nothing on CLUSTER (it lists every tenant's ACLs and SCRAM users);
            # an exactly-once flow's own transactional ids on its target
            scope = mm2_scope(flow.source, flow.target, flow.id, list(tenant.topic_prefixes),
                              list(tenant.group_prefixes), list(flow.remote_topic_prefixes),
                              exactly_once=flow.exactly_once)
            for cluster, resource_type, prefixes, operations in scope:
                for prefix in prefixes:
                    rows["mm2_scopes"].add(Mm2ScopeRow(name, flow.id, flow.mm2_principal, cluster, resource_type,
                                                       prefix, tuple(sorted(operations)), pattern_type(prefix)))
            for role, topic in _mm2_topics(flow).items():
                rows["mm2_topics"].add(Mm2TopicRow(name, flow.id, flow.target, topic, role))
        for grant in tenant.grants_given:  # the grants the policy kept (grant_valid), and only those
            access = tuple(sorted(set(grant.access)))
            for topic in grant.topics:
                rows["grants"].add(GrantRow(name, grant.to, topic, access, None))
                for flow in tenant.flows:  # the granted names where the tenant's flows copy them
                    rows["grants"].add(GrantRow(name, grant.to, flow.remote_name(topic), access, flow.target))
    owners = tenancy.principal_owners()
    for cluster, quotas in desired_quotas(tenancy).items():
        for name, quota in quotas.items():
            rows["quotas"] |= {QuotaRow(owners[name], name, cluster, key, float(value))
                               for key, value in quota.values().items()}
    return {table: sorted(items, key=_sort_key) for table, items in rows.items()}


def _mm2_topics(flow: resolved.Flow) -> dict[str, str]:
    """role -> name of the flow's own MM2 and Connect topics, as names.py names them."""
    connect = dataclasses.asdict(flow.connect)
    del connect["group"]
    return {**dataclasses.asdict(flow.mm2_topics), **connect}


def _sort_key(row: Row) -> tuple[str, ...]:
    return tuple("" if v is None else str(v) for v in row)


def build_tenancy(spark: SparkSession, tenancy: resolved.Tenancy, clusters: Mapping[str, Cluster]) -> Tenancy:
    return tenancy_frames(spark, tenancy_rows(tenancy, clusters))
