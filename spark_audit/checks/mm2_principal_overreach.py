"""MM2_PRINCIPAL_OVERREACH: a flow's MM2 principal is allowed more than its flow needs.

A flow's scope (tenancy `mm2_scopes`, compile/acls.py `mm2_scope`): on the source
READ/DESCRIBE/DESCRIBE_CONFIGS on the tenant's topic prefixes and DESCRIBE on its
group prefixes; on the target the write side and READ of its remote prefixes, its
own `mm2gov.<flow-id>.` topics and group, and READ on the tenant's group prefixes
(group offset sync). Nothing on the CLUSTER resource: with `sync.topic.acls.enabled=false` MM2
needs none, and on a real broker DESCRIBE on the cluster lists every ACL binding
and every SCRAM user (other tenants' included), ALTER changes them. A CLUSTER
binding is therefore never in scope, whatever the scope table says.
An exactly-once flow's MM2 also writes transactions on the target under its own
transactional ids (TRANSACTIONAL_ID: its tasks' PREFIXED `mm2gov.<flow-id>.connect-`
and its Connect leader's LITERAL `connect-cluster-mm2gov.<flow-id>.connect`).
The check is generic over resource types: an ALLOW binding (ALL expanded,
implied operations included) is in scope when the scope has an entry of that
cluster and type listing the operation whose pattern covers the binding's: a
PREFIXED entry covers every pattern starting with it, a LITERAL entry only the
LITERAL binding of that exact name. Anything else is reported: READ on another
tenant's topics, any binding on a third cluster, a wildcard pattern, any
cluster-level grant, a transactional id outside the flow's own (a `connect-cluster-`
prefix reaches every Connect cluster's leader, another flow's prefix its tasks).
Decided per binding, so a grant beyond scope is reported before a topic it
would reach exists; the evidence lists the tenants whose topics or groups it
reaches today, and whose flows' transactional ids its pattern overlaps. One
finding per binding pattern. Reach (spark_audit.evidence): the flow's tenant
reaches those tenants; a cluster-level grant reaches every tenant's ACLs and
users, a transactional id outside the flow's own can fence any producer using
it (tenants' applications included), which `reach_unknown` says.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_audit.access import WILDCARD, expand_operations, reach
from spark_audit.checks.common import allow_bindings, declared, joined, kind_of
from spark_audit.evidence import reaches
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy
from spark_audit.ownership import owned_resources

CHECK_ID = "MM2_PRINCIPAL_OVERREACH"
CLUSTER = "CLUSTER"  # resource type: never part of a flow's scope
TRANSACTIONAL_ID = "TRANSACTIONAL_ID"


def covers(scope: Column, scope_pattern: Column, name: Column, name_pattern: Column) -> Column:
    """A scope entry covers a binding's pattern: PREFIXED, every pattern starting with it but the LITERAL
    `*` (every name); LITERAL, only the LITERAL binding of that exact name."""
    literal = name_pattern == "LITERAL"
    return F.when(scope_pattern == "LITERAL", literal & (name == scope)).otherwise(
        name.startswith(scope) & ~(literal & (name == WILDCARD)))


def overlaps(scope: Column, scope_pattern: Column, name: Column, name_pattern: Column) -> Column:
    """Some name matches both patterns (LITERAL `*` matches every name)."""
    every = (name_pattern == "LITERAL") & (name == WILDCARD)
    both_prefixed = (scope_pattern == "PREFIXED") & (name_pattern == "PREFIXED")
    return (every | F.when(both_prefixed, name.startswith(scope) | scope.startswith(name))
            .when(scope_pattern == "PREFIXED", name.startswith(scope))
            .when(name_pattern == "PREFIXED", scope.startswith(name))
            .otherwise(name == scope))


def transactional_reach(bindings: DataFrame, tenancy: Tenancy) -> DataFrame:
    """cluster, principal, resource_type, resource_name, pattern_type, owner: the other tenants whose
    flows' transactional ids (their scopes' TRANSACTIONAL_ID entries) a TRANSACTIONAL_ID binding overlaps.
    No resource lists transactional ids, so their reach is read off the scopes, which are small."""
    others = F.broadcast(tenancy.mm2_scopes.filter(F.col("resource_type") == TRANSACTIONAL_ID).select(
        F.col("cluster").alias("o_cluster"), F.col("tenant").alias("owner"), F.col("prefix").alias("o_name"),
        F.col("pattern_type").alias("o_pattern")))
    condition = [F.col("cluster") == F.col("o_cluster"), F.col("owner") != F.col("p_tenant"),
                 overlaps(F.col("o_name"), F.col("o_pattern"), F.col("resource_name"), F.col("pattern_type"))]
    return (bindings.filter(F.col("resource_type") == TRANSACTIONAL_ID).join(others, condition)
            .select("cluster", "principal", "resource_type", "resource_name", "pattern_type", "owner"))


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    flows = F.broadcast(tenancy.flows.select(F.col("flow_id").alias("p_flow"), "source", "target"))
    bindings = (allow_bindings(snapshot).join(declared(tenancy).filter(F.col("role") == "mm2"), "principal")
                .join(flows, "p_flow"))
    scopes = F.broadcast(tenancy.mm2_scopes.filter(F.col("resource_type") != CLUSTER).select(
        F.col("principal").alias("s_principal"), F.col("cluster").alias("s_cluster"),
        F.col("resource_type").alias("s_type"), F.col("prefix").alias("s_prefix"),
        F.col("pattern_type").alias("s_pattern"), F.col("operations")))
    in_scope = [F.col("principal") == F.col("s_principal"), F.col("cluster") == F.col("s_cluster"),
                F.col("resource_type") == F.col("s_type"),
                covers(F.col("s_prefix"), F.col("s_pattern"), F.col("resource_name"), F.col("pattern_type")),
                F.array_contains(F.col("operations"), F.col("op"))]
    outside = expand_operations(bindings).join(scopes, in_scope, "left_anti")
    per_binding = outside.groupBy("cluster", "principal", "p_tenant", "p_flow", "source", "target",
                                  "resource_type", "resource_name", "pattern_type").agg(
        F.collect_set("op").alias("operations"), F.collect_set("host").alias("hosts"))
    pattern = per_binding.select("cluster", "principal", "p_tenant", "resource_type", "resource_name", "pattern_type")
    resources = owned_resources(snapshot, tenancy).filter(F.col("owner").isNotNull())
    foreign = (reach(pattern, resources).filter(F.col("owner") != F.col("p_tenant"))
               .select("cluster", "principal", "resource_type", F.col("pattern").alias("resource_name"),
                       "pattern_type", "owner")
               .unionByName(transactional_reach(pattern, tenancy))
               .groupBy("cluster", "principal", "resource_type", "resource_name", "pattern_type")
               .agg(F.collect_set("owner").alias("reaches_tenants")))
    found = per_binding.join(foreign, ["cluster", "principal", "resource_type", "resource_name", "pattern_type"],
                             "left")
    where = F.when(~F.col("cluster").isin(F.col("source"), F.col("target")),
                   F.concat(F.lit(" on "), F.col("cluster"), F.lit(", which is neither its source nor its target")))
    where = where.otherwise(F.concat(F.lit(" on "), F.col("cluster"), F.lit(" outside its flow's scope")))
    foreign_tenants = F.coalesce("reaches_tenants", F.array().cast("array<string>"))
    reached = F.when(F.size(foreign_tenants) > 0,
                     F.concat(F.lit("; reaches topics/groups of "), joined(F.col("reaches_tenants"))))
    cluster_wide = F.when(F.col("resource_type") == CLUSTER, F.concat(
        F.lit("; a cluster-level grant: DESCRIBE lists every ACL binding and SCRAM user of "), F.col("cluster"),
        F.lit(", other tenants' included, ALTER changes them")))
    message = F.concat(F.col("principal"), F.lit(" (MM2 of flow "), F.col("p_flow"), F.lit(") is allowed "),
                       joined(F.col("operations")), F.lit(" on "), F.lower("pattern_type"), F.lit(" "),
                       kind_of(F.col("resource_type")), F.lit(" '"), F.col("resource_name"), F.lit("'"), where,
                       F.coalesce(reached, F.lit("")), F.coalesce(cluster_wide, F.lit("")))
    unknown = F.when(F.col("resource_type") == CLUSTER, F.concat(
        F.lit("cluster-level "), joined(F.col("operations")), F.lit(" on "), F.col("cluster"),
        F.lit(": every tenant's ACL bindings and SCRAM users")))
    unknown = unknown.when(F.col("resource_type") == TRANSACTIONAL_ID, F.concat(
        F.lit("transactional ids outside its flow's own on "), F.col("cluster"),
        F.lit(": it can fence and abort the transactions of any producer using them, tenants' applications "
              "included")))
    evidence = F.struct(F.col("p_flow").alias("flow_id"), "source", "target", "pattern_type",
                        F.array_sort("operations").alias("operations"), F.array_sort("hosts").alias("hosts"),
                        F.array_sort(F.coalesce("reaches_tenants", F.array().cast("array<string>")))
                        .alias("reaches_tenants"))
    return to_findings(found, CHECK_ID, tenant="p_tenant", cluster="cluster", resource_type="resource_type",
                       resource_name="resource_name", principal="principal", message=message, evidence=evidence,
                       reach=reaches(F.col("p_tenant"), foreign_tenants, unknown))
