"""Effective access: which principal Kafka lets do which operation on which resource.

Kafka's rules (StandardAuthorizer), applied as joins so the cost stays linear:
- a binding matches a resource of the same cluster and type when its pattern is
  LITERAL and equal to the name, LITERAL `*` (every name), or PREFIXED and a
  leading part of the name. All three are one equi-join of the binding's
  pattern with the resource's stems (`ownership.stems`: its leading substrings,
  the empty one included, which is what `*` joins on), then a filter;
- principal `User:*` and host `*` match everyone and every host;
- ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE, ALLOW of
  ALTER_CONFIGS also allows DESCRIBE_CONFIGS, and ALL is every operation of the
  resource type;
- a matching DENY wins: same operation (or ALL), same principal (or `User:*`),
  host `*` or the allowed host. A DENY only for host h leaves an ALLOW on `*`
  working from every other host, so that access is still reported.

Matching every binding against every resource is the size of the answer (a
tenant's PREFIXED binding reaches all its topics). Detectors that look for the
few accesses that cross a boundary first ask `reach` which owners a binding
touches (one row per binding and owner, from a de-duplicated stem index), keep
the suspicious pairs, and only expand those to single resources.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_audit.ownership import stems

ALL_OPERATIONS: dict[str, list[str]] = {
    "TOPIC": ["READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"],
    "GROUP": ["READ", "DESCRIBE", "DELETE"],
    "CLUSTER": ["CREATE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "ALTER",
                "DESCRIBE"],
    "TRANSACTIONAL_ID": ["DESCRIBE", "WRITE"],
    "DELEGATION_TOKEN": ["DESCRIBE"],
    "USER": ["CREATE_TOKENS", "DESCRIBE_TOKENS"],
}
IMPLIED: dict[str, list[str]] = {"READ": ["DESCRIBE"], "WRITE": ["DESCRIBE"], "DELETE": ["DESCRIBE"],
                                 "ALTER": ["DESCRIBE"], "ALTER_CONFIGS": ["DESCRIBE_CONFIGS"]}
WILDCARD = "*"
ANY_PRINCIPAL = "User:*"
KEYS = ("cluster", "resource_type")


def _lookup(table: dict[str, list[str]], key: Column) -> Column:
    return F.element_at(F.create_map(*[part for k, v in table.items() for part in (F.lit(k), F.array(*map(F.lit, v)))]),
                        key)


def expand_operations(acls: DataFrame) -> DataFrame:
    """`acls` with `op`: one row per operation the binding covers (ALL expanded; ALLOW adds implied ones)."""
    everything = F.coalesce(_lookup(ALL_OPERATIONS, F.col("resource_type")), F.array(F.col("operation")))
    implied = F.coalesce(_lookup(IMPLIED, F.col("operation")), F.array().cast("array<string>"))
    ops = (F.when(F.col("operation") == "ALL", everything)
           .when(F.col("permission") == "ALLOW", F.array_union(F.array(F.col("operation")), implied))
           .otherwise(F.array(F.col("operation"))))
    return acls.withColumn("op", F.explode(ops))


def _keyed(bindings: DataFrame) -> DataFrame:
    """Bindings with their pattern in `pattern` and the stem they join on in `stem`: the name,
    or "" for the LITERAL `*` (every resource has the empty stem)."""
    wildcard = (F.col("pattern_type") == "LITERAL") & (F.col("pattern") == WILDCARD)
    return (bindings.filter(F.col("pattern_type").isin("LITERAL", "PREFIXED"))
            .withColumnRenamed("resource_name", "pattern")
            .withColumn("stem", F.when(wildcard, F.lit("")).otherwise(F.col("pattern"))))


def _matches(stem_is_name: Column) -> Column:
    """After the join on stem: PREFIXED takes any stem, LITERAL the whole name (or "" for `*`)."""
    wildcard = (F.col("pattern_type") == "LITERAL") & (F.col("pattern") == WILDCARD)
    return (F.col("pattern_type") == "PREFIXED") | wildcard | stem_is_name


def match(bindings: DataFrame, resources: DataFrame, keys: Sequence[str] = ()) -> DataFrame:
    """(binding, resource) pairs where the binding's pattern matches the resource name.

    One equi-join of the bindings' patterns with the resources' stems (lengths 0..len).
    bindings: ACL columns plus anything else; their resource_name comes out as `pattern`.
    resources: cluster, resource_type, resource_name plus anything else. `keys`: further
    columns both sides have that must be equal.
    """
    joined = _keyed(bindings).join(stems(resources, empty=True), [*KEYS, *keys, "stem"])
    return joined.filter(_matches(F.col("stem") == F.col("resource_name"))).drop("stem")


def reach(bindings: DataFrame, resources: DataFrame, by: str = "owner") -> DataFrame:
    """`bindings` (pattern in `pattern`) plus `by`: each distinct value of resources[by] among the
    resources the binding matches. One row per binding and value, however many resources: the
    join is with a de-duplicated (cluster, type, stem, value, stem-is-the-name) index."""
    index = (stems(resources.select(*KEYS, "resource_name", by), empty=True)
             .select(*KEYS, "stem", by, (F.col("stem") == F.col("resource_name")).alias("_whole")).distinct())
    joined = _keyed(bindings).join(index, [*KEYS, "stem"])
    return joined.filter(_matches(F.col("_whole"))).drop("stem", "_whole").distinct()


def effective_access(allows: DataFrame, acls: DataFrame, resources: DataFrame,
                     keys: Sequence[str] = ()) -> DataFrame:
    """What `allows` (ALLOW bindings, possibly pre-filtered, with `resource_name` or `pattern` as
    the pattern) give on `resources` once implied operations and every DENY in `acls` are applied.

    One row per (binding, resource, op): the binding's columns (principal, host, pattern,
    pattern_type, operation...), the resource's columns, and `op`.
    """
    if "pattern" in allows.columns:
        allows = allows.withColumnRenamed("pattern", "resource_name")
    granted = match(expand_operations(allows.filter(F.col("permission") == "ALLOW")), resources, keys)
    denies = (match(expand_operations(acls.filter(F.col("permission") == "DENY")),
                    resources.select(*KEYS, "resource_name"))
              .select(*KEYS, "resource_name", F.col("principal").alias("d_principal"),
                      F.col("host").alias("d_host"), F.col("op").alias("d_op")))
    a, d = granted.alias("a"), denies.alias("d")
    condition = [F.col(f"a.{k}") == F.col(f"d.{k}") for k in (*KEYS, "resource_name")] + [
        (F.col("d.d_principal") == F.col("a.principal")) | (F.col("d.d_principal") == ANY_PRINCIPAL),
        F.col("d.d_op") == F.col("a.op"),
        (F.col("d.d_host") == WILDCARD) | (F.col("d.d_host") == F.col("a.host")),
    ]
    return a.join(d, condition, "left_anti")
