"""Who owns a topic or group name: the tenant of the longest declared prefix it starts with.

Prefix tests never compare every name with every prefix. Ownership takes, for
each length a declared prefix has (a handful), the name's leading substring of
that length and looks it up in a hash table of the declared prefixes that the
plan carries as a literal (the tenancy is small): a projection, no join, no
shuffle, and the cost per name does not grow with the number of prefixes.
Where the other side is large (ACL bindings), names are exploded into all their
leading substrings ("stems", lengths 1..len; Kafka names are at most 249
chars) and equi-joined on stem = prefix: linear in the total length of names.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from governance.model.names import INTERNAL_TOPIC_PREFIX, OWNERSHIP_TOPIC
from spark_audit.model import Snapshot, Tenancy

# Names that are Kafka's or mm2gov's own, never a tenant's.
PLATFORM_TOPICS = rf"^(__.*|_schemas|{re.escape(OWNERSHIP_TOPIC)})$"
# The internal topics MirrorMaker 2 names per cluster alias with Kafka's default policy, one per
# alias pair and so shared by every flow between two clusters: `mm2-offset-syncs.<alias>.internal`,
# `<alias>.checkpoints.internal`, `heartbeats` (and its remote copies `<alias>.heartbeats`), Connect's
# `mm2-configs/offsets/status.<alias>.internal`. A flow's own topics are not matched by a pattern: the
# tenancy names them (`mm2gov.<flow-id>.*`, names.py) and ownership finds their flow.
LEGACY_MM2_TOPICS = (r"^(mm2-offset-syncs\..+\.internal|.+\.checkpoints\.internal|(.+\.)?heartbeats"
                     r"|mm2-(configs|offsets|status)\..+)$")


def stems(df: DataFrame, name: str = "resource_name", alias: str = "stem", empty: bool = False) -> DataFrame:
    """`df` with one row per leading substring of `df[name]` (the name itself included) in `alias`;
    with `empty`, also the empty stem "" (what a LITERAL `*` binding joins on)."""
    first = F.lit(0 if empty else 1)
    length = F.explode(F.sequence(first, F.greatest(F.length(name), first))).alias("_n")
    return df.select("*", length).withColumn(alias, F.expr(f"substring(`{name}`, 1, _n)")).drop("_n")


OWNER_FIELDS = ("tenant", "origin", "flow_id", "prefix")
OWNER_TYPE = "struct<" + ", ".join(f"{name}: string" for name in OWNER_FIELDS) + ">"
SEPARATOR = "\t"  # lookup keys are "<cluster>\t<prefix>", or "\t<prefix>" for every cluster
KEYS_PER_BUCKET = 4
_OWNED_LOCK = threading.Lock()


def _bucket_column(key: Column, buckets: int) -> Column:
    """The bucket of `key`: Spark's own hash of it (Murmur3), mod `buckets`. The table is filled with the hashes
    Spark computed for its keys (`owner_lookup`), so the side that fills it and the side that reads it cannot
    disagree: before, the bucket was an MD5 computed once in Python and once in Spark, two implementations."""
    return F.pmod(F.hash(key), F.lit(buckets))


@dataclass(frozen=True)
class OwnerLookup:
    """The declared prefixes of one kind as a hash table Spark can carry as a literal: `table` is
    JSON of a list of `buckets` maps {"<cluster>\t<prefix>": owner}; `lengths` the prefix lengths."""

    table: str
    buckets: int
    lengths: tuple[int, ...]


def owner_lookup(tenancy: Tenancy, kind: str) -> OwnerLookup:
    """Built once on the driver (the tenancy is small: hundreds of tenants) and kept in
    `tenancy.memo`. Two tenants declaring one prefix is a policy violation; the greatest tenant
    name wins, stably."""
    memo = f"owners:{kind}"
    if memo not in tenancy.memo:
        # One row holding every prefix as JSON, not a Row per prefix: 5,000 tenants declare 55,000 prefixes,
        # and making a Row of each and reading its fields took 2.9 s of the driver's time (2026-11-29).
        key = F.concat(F.coalesce("cluster", F.lit("")), F.lit(SEPARATOR), "prefix")
        declared = tenancy.tenant_prefixes.filter(F.col("kind") == kind).select(F.to_json(F.collect_list(
            F.struct("tenant", "origin", "prefix", "cluster", "flow_id", F.hash(key).alias("hash"))))).first()
        rows: list[dict[str, Any]] = json.loads(declared[0]) if declared and declared[0] else []  # nulls left out
        entries: dict[str, tuple[int, dict[str, str | None]]] = {}
        for row in sorted(rows, key=lambda r: (r["tenant"], r["origin"], r["prefix"], r.get("cluster", ""))):
            entries[f"{row.get('cluster', '')}{SEPARATOR}{row['prefix']}"] = (row["hash"], {
                "tenant": row["tenant"], "origin": row["origin"], "flow_id": row.get("flow_id"),
                "prefix": row["prefix"]})
        buckets = max(1, len(entries) // KEYS_PER_BUCKET)
        table: list[dict[str, dict[str, str | None]]] = [{} for _ in range(buckets)]
        for name, (hashed, owner) in entries.items():
            table[hashed % buckets][name] = owner  # Python's % of a negative hash is Spark's pmod
        lengths = tuple(sorted({len(owner["prefix"] or "") for _, owner in entries.values()}))
        tenancy.memo[memo] = OwnerLookup(json.dumps(table, sort_keys=True), buckets, lengths)
    return tenancy.memo[memo]


def owner_of(cluster: Column, name: Column, lookup: OwnerLookup) -> Column:
    """The owner struct of `name` on `cluster` (null: nobody owns it): the longest declared prefix
    the name starts with, a cluster's own declaration before an every-cluster one of the same
    length. One hash lookup per declared prefix length and scope: a projection, no join."""
    if not lookup.lengths:
        return F.lit(None).cast(OWNER_TYPE)
    table = F.from_json(F.lit(lookup.table), f"array<map<string, {OWNER_TYPE}>>")  # folded into a literal

    def find(key: Column) -> Column:
        return F.try_element_at(F.try_element_at(table, _bucket_column(key, lookup.buckets) + 1), key)

    def at(length: Column) -> Column:
        stem = name.substr(F.lit(1), length)
        found = F.coalesce(find(F.concat(cluster, F.lit(SEPARATOR), stem)), find(F.concat(F.lit(SEPARATOR), stem)))
        return F.when(F.length(name) >= length, found)

    candidates = F.transform(F.array(*[F.lit(n) for n in lookup.lengths]), at)  # shortest first
    return F.aggregate(candidates, F.lit(None).cast(OWNER_TYPE), lambda best, found: F.coalesce(found, best))


def owners(names: DataFrame, tenancy: Tenancy, kind: str, name: str = "resource_name") -> DataFrame:
    """`names` (with `cluster` and `name` columns) plus owner, owner_origin, owner_flow, owner_prefix
    (all null: nobody owns the name), from the tenant prefixes of `kind` ("topic" or "group")."""
    # Once per row: the lookup's one-element array is exploded (a generator), which a filter on the owner
    # (`owner IS NOT NULL`, `owner != tenant`) cannot be pushed below. Selected as a plain column, Spark's
    # optimizer copied the whole lookup into each such filter: three lookups a row in ACL_PREFIX_OVERLAP.
    best = F.explode(F.array(owner_of(F.col("cluster"), F.col(name), owner_lookup(tenancy, kind)))).alias("_best")
    return names.select("*", best).select(  # two projections: the lookup runs once per row, not per field
        *[F.col(f"`{c}`") for c in names.columns], F.col("_best.tenant").alias("owner"),
        F.col("_best.origin").alias("owner_origin"), F.col("_best.flow_id").alias("owner_flow"),
        F.col("_best.prefix").alias("owner_prefix"))


def topic_resources(snapshot: Snapshot) -> DataFrame:
    """The topics on the clusters as ACL resources: cluster, resource_type, resource_name."""
    return snapshot.topics.select("cluster", F.lit("TOPIC").alias("resource_type"),
                                  F.col("topic").alias("resource_name")).distinct()


def group_resources(snapshot: Snapshot) -> DataFrame:
    """The consumer groups the snapshot saw (those with committed offsets) as ACL resources."""
    return snapshot.group_offsets.select("cluster", F.lit("GROUP").alias("resource_type"),
                                         F.col("group").alias("resource_name")).distinct()


def owned_resources(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    """Topics and groups with their owner (null owner: nobody declares the name).

    Computed once per snapshot and tenancy, and kept (below): several checks read it (ACL_CROSS_TENANT,
    MM2_PRINCIPAL_OVERREACH, PRINCIPAL_LOOKALIKE), one check in several places (the stem index of `reach`,
    `effective_access`'s matches), and every stage that computed it again carried the ownership lookup
    table (`owner_lookup`, a literal the size of the tenancy's prefixes) into each of its tasks, which
    deserialized it: most of those checks' time on a large estate. One row per topic and group: small."""
    with _OWNED_LOCK:  # the checks run in threads (run.run_checks): one of them computes it
        memo = tenancy.memo.get("owned_resources")
        if memo is None or memo[0] is not snapshot:
            owned = owners(topic_resources(snapshot), tenancy, "topic").unionByName(
                owners(group_resources(snapshot), tenancy, "group"))
            # Checkpointed (computed now, kept by the executors), not cached: a task that reads a cached
            # DataFrame still carries the plan that computed it, the lookup literal included, and each task
            # deserialized it again (ACL_CROSS_TENANT at 5,000 tenants: 3 to 5.5 task-seconds of it, 2026-11-29).
            # A checkpoint's plan is its data. Another snapshot's is dropped, and Spark's cleaner frees its
            # blocks once nothing refers to it. Should an executor holding part of it be lost, the checks that
            # read it fail (Spark: checkpoint block not found), and so does the audit: never a partial answer.
            memo = tenancy.memo["owned_resources"] = (snapshot, owned.localCheckpoint(eager=True))
        resources: DataFrame = memo[1]
        return resources


def is_platform_topic(name: Column) -> Column:
    return name.rlike(PLATFORM_TOPICS)


def is_legacy_mm2_topic(name: Column) -> Column:
    """A per-alias internal topic of Kafka's default policy (LEGACY_MM2_TOPICS)."""
    return name.rlike(LEGACY_MM2_TOPICS)


def is_reserved_mm2_topic(name: Column) -> Column:
    """A name under mm2gov's reserved prefix (names.py), its ownership topic aside: a flow's own topic,
    or a removed flow's left-over; never a tenant's, whatever prefix a tenant declares."""
    return name.startswith(INTERNAL_TOPIC_PREFIX) & (name != OWNERSHIP_TOPIC)
