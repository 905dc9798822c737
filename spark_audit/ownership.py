"""Who owns a topic or group name: the tenant of the longest declared prefix it starts with.

Prefix tests never compare every name with every prefix. Ownership takes, for
each length a declared prefix has (a handful), the name's leading substring of
that length and looks it up with a broadcast hash join in the declared prefixes
of that length: no shuffle of the names. Where the other side is large (ACL
bindings), names are exploded into all their leading substrings ("stems",
lengths 1..len; Kafka names are at most 249 chars) and equi-joined on stem =
prefix: linear in the total length of the names.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_audit.model import Snapshot, Tenancy

# Names that are Kafka's or mm2gov's own, never a tenant's.
PLATFORM_TOPICS = r"^(__.*|_schemas|mm2gov\.ownership)$"
# MirrorMaker 2 / Connect internal topics, mm2gov's per-flow ones (`mm2gov.<flow-id>.*`) included.
MM2_INTERNAL_TOPICS = (r"^(mm2-offset-syncs\..*\.internal|.*\.checkpoints\.internal|(.+\.)?heartbeats"
                       r"|mm2-(configs|offsets|status)\..*|mm2gov\.(?!ownership$).+)$")


def stems(df: DataFrame, name: str = "resource_name", alias: str = "stem", empty: bool = False) -> DataFrame:
    """`df` with one row per leading substring of `df[name]` (the name itself included) in `alias`;
    with `empty`, also the empty stem "" (what a LITERAL `*` binding joins on)."""
    first = F.lit(0 if empty else 1)
    length = F.explode(F.sequence(first, F.greatest(F.length(name), first))).alias("_n")
    return df.select("*", length).withColumn(alias, F.expr(f"substring(`{name}`, 1, _n)")).drop("_n")


OWNER_FIELDS = ("tenant", "origin", "flow_id", "prefix")
Lookup = tuple[str, DataFrame, Column]  # (owner column, broadcast table, join condition)


def owner_lookups(tenancy: Tenancy, kind: str) -> tuple[list[Column], list[Lookup]]:
    """The declared prefixes of `kind` as lookup tables with unique keys, one per prefix length n
    and scope: (cluster, prefix) for a cluster's own declarations (remote, internal), (prefix) for
    the every-cluster ones (own). Returns the stem columns to add to the names (`_stem<i>`: the
    first n characters) and, longest first, the tables with their join conditions.

    Read once on the driver (the tenancy is small) and kept in `tenancy.memo`. Two tenants
    declaring one prefix is a policy violation; the greatest tenant name wins, stably."""
    key = f"owners:{kind}"
    if key not in tenancy.memo:
        rows = tenancy.tenant_prefixes.filter(F.col("kind") == kind).collect()
        by_length: dict[int, dict[tuple[str, str], tuple]] = {}
        for row in sorted(rows, key=lambda r: (r.tenant, r.origin, r.prefix, r.cluster or "")):
            entry = (row.tenant, row.origin, row.flow_id, row.prefix)
            by_length.setdefault(len(row.prefix), {})[(row.cluster or "", row.prefix)] = entry
        spark = tenancy.tenant_prefixes.sparkSession
        owner = ", ".join(f"{name} string" for name in OWNER_FIELDS)
        stem_lengths: list[tuple[str, int]] = []
        lookups: list[Lookup] = []
        for i, (length, entries) in enumerate(sorted(by_length.items())):
            stem = f"_stem{i}"
            stem_lengths.append((stem, length))
            specific = [(cluster, *entry) for (cluster, _), entry in entries.items() if cluster]
            everywhere = [entry for (cluster, _), entry in entries.items() if not cluster]
            if everywhere:
                table = spark.createDataFrame(everywhere, owner).select(
                    F.col("prefix").alias(f"_pe{i}"), F.struct(*OWNER_FIELDS).alias(f"_oe{i}"))
                lookups.insert(0, (f"_oe{i}", F.broadcast(table), F.col(stem) == F.col(f"_pe{i}")))
            if specific:
                table = spark.createDataFrame(specific, f"cluster string, {owner}").select(
                    F.col("cluster").alias(f"_cs{i}"), F.col("prefix").alias(f"_ps{i}"),
                    F.struct(*OWNER_FIELDS).alias(f"_os{i}"))
                condition = (F.col(stem) == F.col(f"_ps{i}")) & (F.col("cluster") == F.col(f"_cs{i}"))
                lookups.insert(0, (f"_os{i}", F.broadcast(table), condition))
        tenancy.memo[key] = (stem_lengths, lookups)
    stem_lengths, lookups = tenancy.memo[key]
    return stem_lengths, lookups


def owners(names: DataFrame, tenancy: Tenancy, kind: str, name: str = "resource_name") -> DataFrame:
    """`names` (with `cluster` and `name` columns) plus owner, owner_origin, owner_flow, owner_prefix
    (all null: nobody owns the name), from the tenant prefixes of `kind` ("topic" or "group").

    The longest declared prefix the name starts with wins, a cluster's own declaration before an
    every-cluster one of the same length. One broadcast hash join per declared prefix length and
    scope (a handful): no shuffle, and the cost does not grow with the number of prefixes.
    """
    stem_lengths, lookups = owner_lookups(tenancy, kind)
    target = F.col(name)
    df = names.select("*", *[F.when(F.length(target) >= n, target.substr(F.lit(1), F.lit(n))).alias(stem)
                             for stem, n in stem_lengths])
    for _, table, condition in lookups:
        df = df.join(table, condition, "left")
    best = F.coalesce(*[F.col(owner) for owner, _, _ in lookups]) if lookups else F.lit(None).cast(
        "struct<" + ", ".join(f"{f}: string" for f in OWNER_FIELDS) + ">")
    return df.select(*[F.col(f"`{c}`") for c in names.columns], best.tenant.alias("owner"),
                     best.origin.alias("owner_origin"), best.flow_id.alias("owner_flow"),
                     best.prefix.alias("owner_prefix"))


def topic_resources(snapshot: Snapshot) -> DataFrame:
    """The topics on the clusters as ACL resources: cluster, resource_type, resource_name."""
    return snapshot.topics.select("cluster", F.lit("TOPIC").alias("resource_type"),
                                  F.col("topic").alias("resource_name")).distinct()


def group_resources(snapshot: Snapshot) -> DataFrame:
    """The consumer groups the snapshot saw (those with committed offsets) as ACL resources."""
    return snapshot.group_offsets.select("cluster", F.lit("GROUP").alias("resource_type"),
                                         F.col("group").alias("resource_name")).distinct()


def owned_resources(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    """Topics and groups with their owner (null owner: nobody declares the name)."""
    return owners(topic_resources(snapshot), tenancy, "topic").unionByName(
        owners(group_resources(snapshot), tenancy, "group"))


def is_platform_topic(name: Column) -> Column:
    return name.rlike(PLATFORM_TOPICS)


def is_mm2_internal_topic(name: Column) -> Column:
    return name.rlike(MM2_INTERNAL_TOPICS)
