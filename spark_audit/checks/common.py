"""Small pieces several detectors share: who a principal is, admin exclusion, grants, texts."""

from __future__ import annotations

import json

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_audit.access import ANY_PRINCIPAL
from spark_audit.model import Snapshot, Tenancy

GRANTED_OPERATIONS = ("READ", "DESCRIBE")  # what a `read` grant gives (compile/acls.py)


def allow_bindings(snapshot: Snapshot) -> DataFrame:
    return snapshot.acls.filter(F.col("permission") == "ALLOW")


def declared(tenancy: Tenancy) -> DataFrame:
    """principal -> p_tenant, role, p_flow: the principals the governance repo declares."""
    return F.broadcast(tenancy.principals.select("principal", F.col("tenant").alias("p_tenant"), "role",
                                                 F.col("flow_id").alias("p_flow")))


def without_admins(df: DataFrame, snapshot: Snapshot) -> DataFrame:
    """Rows of `df` (cluster, principal) whose principal is not an admin/super user of that cluster."""
    return df.join(F.broadcast(snapshot.admin_principals), ["cluster", "principal"], "left_anti")


def not_granted(df: DataFrame, tenancy: Tenancy, *, owner: str, accessor: str, name: str, op: str) -> DataFrame:
    """Rows of `df` that no reviewed grant covers: a `read` grant from `owner` to `accessor` whose
    prefix starts `name` on that cluster (or on every cluster) covers READ and DESCRIBE."""
    grants = (tenancy.grants.filter(F.array_contains("access", "read"))
              .select(F.col("from_tenant").alias("g_from"), F.col("to_tenant").alias("g_to"),
                      F.col("prefix").alias("g_prefix"), F.col("cluster").alias("g_cluster")))
    condition = [
        F.col(owner) == F.col("g_from"), F.col(accessor) == F.col("g_to"),
        F.col(name).startswith(F.col("g_prefix")),
        F.col("g_cluster").isNull() | (F.col("g_cluster") == F.col("cluster")),
        F.col(op).isin(*GRANTED_OPERATIONS),
    ]
    return df.join(F.broadcast(grants), condition, "left_anti")


def flow_copies(name: str, regex: str, excludes: str) -> Column:
    """Whether a flow's MM2 copies the topic (or syncs the group) `name`: its whole name matches the flow's
    `regex` (one exploded item of topics/groups) and none of the flow's `excludes` items (exclude_topics/
    exclude_groups), as MM2's filter decides with topics.exclude after mm2gov's own exclusions."""
    whole = "concat('^(?:', {}, ')$')"
    return F.expr(f"{name} rlike {whole.format(regex)} "
                  f"and not exists({excludes}, x -> {name} rlike {whole.format('x')})")


def joined(values: Column, separator: str = ", ") -> Column:
    return F.array_join(F.array_sort(values), separator)


def who(principal: Column, tenant: Column) -> Column:
    """'User:x (tenant t)', 'every principal (User:*)' or 'User:x (undeclared)' for messages."""
    return (F.when(principal == ANY_PRINCIPAL, F.lit("every principal (User:*)"))
            .when(tenant.isNull(), F.concat(principal, F.lit(" (undeclared)")))
            .otherwise(F.concat(principal, F.lit(" (tenant "), tenant, F.lit(")"))))


def kind_of(resource_type: Column) -> Column:
    """'topic' / 'group' / 'cluster': how messages and tenant_prefixes.kind name a resource type."""
    return F.lower(resource_type)


# What reach into a tenant's data weighs, by the data's classification: restricted and confidential data
# read by someone nobody answers for is a breach (critical), internal data a serious one (high), public data
# is readable by design (medium: still an identity with no owner).
DATA_SEVERITY = {"restricted": "critical", "confidential": "critical", "internal": "high", "public": "medium"}
SEVERITY_ORDER = ("info", "low", "medium", "high", "critical")


def data_severity(owners: Column, tenancy: Tenancy) -> Column:
    """The severity of reach into the data of `owners` (an array of tenant names): the highest of their
    classifications' (DATA_SEVERITY). A tenant without a known classification weighs as restricted data
    (fail closed). The classifications are a small table, read once per audit (`tenancy.memo`)."""
    if "data_levels" not in tenancy.memo:
        tenancy.memo["data_levels"] = {
            row.tenant: SEVERITY_ORDER.index(DATA_SEVERITY.get(row.classification, "critical"))
            for row in tenancy.classifications.collect()}
    levels: dict[str, int] = tenancy.memo["data_levels"]
    worst = F.lit(len(SEVERITY_ORDER) - 1)
    # One JSON literal that the optimizer folds into a map, not a create_map of two F.lit per tenant: each
    # F.lit is a round trip to the JVM (5,000 tenants: 10,000 of them, 7.5 s of the check's 10, 2026-11-29).
    table = F.from_json(F.lit(json.dumps(levels, sort_keys=True)), "map<string, int>")
    ranks = F.transform(owners, lambda t: F.coalesce(F.try_element_at(table, t), worst))
    return F.element_at(F.array(*map(F.lit, SEVERITY_ORDER)), F.coalesce(F.array_max(ranks), worst) + 1)
