"""What the audit reads: the cluster snapshot and the tenancy, as Spark schemas and containers.

The snapshot is what the collector saw on the clusters (one row per object,
`cluster` = the alias in clusters.yaml); the tenancy is what the governance
repo declares (built by `spark_audit.tenancy`). Detectors only ever join the
two: they never talk to a cluster, so they run the same on a laptop and on a
Spark cluster, and tests feed them rows.

Values follow CONTRACT.md: ACL fields are upper case ("TOPIC", "PREFIXED",
"ALLOW"), principals are "User:<name>", SCRAM users are the bare name.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)


def _schema(*columns: tuple[str, Any, bool]) -> StructType:
    return StructType([StructField(name, kind, nullable) for name, kind, nullable in columns])


S, INT, LONG, DOUBLE = StringType(), IntegerType(), LongType(), DoubleType()
STRINGS = ArrayType(StringType(), containsNull=False)

# --- the snapshot (collected from the clusters) ---------------------------------------------
SNAPSHOT_SCHEMAS: dict[str, StructType] = {
    # One ACL binding as the broker lists it (CONTRACT.md shape plus the cluster).
    "acls": _schema(("cluster", S, False), ("principal", S, False), ("host", S, False),
                    ("operation", S, False), ("permission", S, False), ("resource_type", S, False),
                    ("resource_name", S, False), ("pattern_type", S, False)),
    "topics": _schema(("cluster", S, False), ("topic", S, False), ("partitions", INT, True)),
    # Committed offsets: a group that committed on a topic has consumed from it.
    "group_offsets": _schema(("cluster", S, False), ("group", S, False), ("topic", S, False),
                             ("partition", INT, False), ("offset", LONG, True)),
    "scram_users": _schema(("cluster", S, False), ("user", S, False)),
    # Sampled records: identity and tenant marker only, never keys or values.
    # `timestamp` is the Kafka record timestamp in epoch milliseconds (MM2 keeps it);
    # `record_hash` a hash of key + value + timestamp computed by the collector;
    # `marker` the value of a tenant-marker header (a `record_marker.header`) if the record has one;
    # `headers` the record's headers when the collector keeps them (header values are metadata).
    "records": _schema(("cluster", S, False), ("topic", S, False), ("partition", INT, False),
                       ("offset", LONG, False), ("timestamp", LONG, True), ("record_hash", S, False),
                       ("marker", S, True), ("headers", MapType(S, S, True), True)),
    # The broker's super users and the audit's own admin: never findings.
    "admin_principals": _schema(("cluster", S, False), ("principal", S, False)),
    # Client quotas on named `user` entities (governance/kafka/quotas.py), one row per key as Kafka names it
    # (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate, ...).
    "quotas": _schema(("cluster", S, False), ("principal", S, False), ("key", S, False), ("value", DOUBLE, False)),
}

# --- the tenancy (declared in the governance repo) ----------------------------------------
TENANCY_SCHEMAS: dict[str, StructType] = {
    # Names a tenant owns. kind: topic | group; origin: own (the tenant's prefixes, any
    # cluster: cluster is null) | remote (a flow's remote-topic prefix on its target) |
    # internal (`mm2gov.<flow-id>.` on the flow's target, topics and the Connect group).
    "tenant_prefixes": _schema(("tenant", S, False), ("kind", S, False), ("prefix", S, False),
                               ("cluster", S, True), ("origin", S, False), ("flow_id", S, True)),
    # role: tenant (declared in tenants/*.yaml) | mm2 (`User:mm2-<flow-id>`, one per flow) | probe
    # (`User:mm2gov-probe-<tenant>`, when one of its flows has an slo; flow_id null).
    "principals": _schema(("tenant", S, False), ("principal", S, False), ("role", S, False),
                          ("flow_id", S, True), ("access", STRINGS, False)),
    # topics/groups: the flow's Java regexes (MM2 matches whole names); exclude_topics/exclude_groups: the
    # regexes of what the flow does not copy even when topics/groups match it (they only narrow the flow).
    "flows": _schema(("tenant", S, False), ("flow_id", S, False), ("source", S, False), ("target", S, False),
                     ("replication_policy", S, False), ("topics", STRINGS, False), ("groups", STRINGS, False),
                     ("exclude_topics", STRINGS, False), ("exclude_groups", STRINGS, False)),
    "markers": _schema(("tenant", S, False), ("header", S, False), ("value", S, False)),
    # Each tenant's data classification (public | internal | confidential | restricted): what a finding
    # about reach into its data weighs (checks.common.data_severity).
    "classifications": _schema(("tenant", S, False), ("classification", S, False)),
    # Reviewed cross-tenant reads: from_tenant lets to_tenant's principals read names under
    # prefix; cluster null = the granting tenant's own names anywhere, else a remote prefix
    # on that flow target (as compile/acls.py grants them).
    "grants": _schema(("from_tenant", S, False), ("to_tenant", S, False), ("prefix", S, False),
                      ("access", STRINGS, False), ("cluster", S, True)),
    "clusters": _schema(("cluster", S, False), ("zone", S, False)),
    # What each flow's MM2 principal may do (compile/acls.py `mm2_scope`), one row per (cluster,
    # resource type, name): TOPIC, GROUP and, for exactly-once flows, TRANSACTIONAL_ID; nothing on
    # the CLUSTER resource. pattern_type: PREFIXED (`prefix` covers every name starting with it) or
    # LITERAL (exactly that name, e.g. the Connect leader's transactional id).
    "mm2_scopes": _schema(("tenant", S, False), ("flow_id", S, False), ("principal", S, False),
                          ("cluster", S, False), ("resource_type", S, False), ("prefix", S, False),
                          ("operations", STRINGS, False), ("pattern_type", S, False)),
    # Each flow's own MM2 topics on its target (names.py `mm2_flow_topics`, `connect_names`):
    # role offset_syncs | checkpoints | heartbeats | configs | offsets | status.
    "mm2_topics": _schema(("tenant", S, False), ("flow_id", S, False), ("cluster", S, False),
                          ("topic", S, False), ("role", S, False)),
    # The client quotas the repo sets (compile/quotas.py `desired_quotas`), one row per key: a sized flow's MM2
    # principal's fetch quota on its source and produce quota on its target, a tenant principal's own quota.
    "quotas": _schema(("tenant", S, False), ("principal", S, False), ("cluster", S, False), ("key", S, False),
                      ("value", DOUBLE, False)),
}

ACL_FIELDS = ("principal", "host", "operation", "permission", "resource_type", "resource_name", "pattern_type")


def acl_row(cluster: str, binding: Mapping[str, str]) -> tuple[str, ...]:
    """One `acls` row from a binding in CONTRACT.md's shape (as in OUT/acls/<cluster>.json)."""
    return (cluster, *(str(binding[name]) for name in ACL_FIELDS))


@dataclass(frozen=True)
class Snapshot:
    """The collected tables. `partial` names what could not be collected: "<cluster>" or
    "<cluster>:<table>"; detectors whose answer would be wrong on missing data skip it."""

    acls: DataFrame
    topics: DataFrame
    group_offsets: DataFrame
    scram_users: DataFrame
    records: DataFrame
    admin_principals: DataFrame
    quotas: DataFrame
    partial: tuple[str, ...] = ()

    def partial_clusters(self, table: str) -> list[str]:
        """Clusters whose `table` is missing or incomplete in this snapshot."""
        return sorted({entry.split(":", 1)[0] for entry in self.partial
                       if ":" not in entry or entry.endswith(f":{table}")})


@dataclass(frozen=True)
class Tenancy:
    tenant_prefixes: DataFrame
    principals: DataFrame
    flows: DataFrame
    markers: DataFrame
    grants: DataFrame
    clusters: DataFrame
    mm2_scopes: DataFrame
    mm2_topics: DataFrame
    classifications: DataFrame
    quotas: DataFrame
    # Small driver-side values derived from these tables (e.g. ownership lookups), computed once.
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def frames(spark: SparkSession, schemas: Mapping[str, StructType],
           rows: Mapping[str, Iterable[Any]]) -> dict[str, DataFrame]:
    """A DataFrame per schema from row tuples (a missing table is empty); unknown tables are an error."""
    unknown = set(rows) - set(schemas)
    if unknown:
        raise ValueError(f"unknown tables: {', '.join(sorted(unknown))}")
    return {name: rows_frame(spark, list(rows.get(name, ())), schema) for name, schema in schemas.items()}


def empty_frame(spark: SparkSession, schema: StructType) -> DataFrame:
    """A table with no rows that Spark's optimizer knows to be empty (one row of nulls, filtered out by a false
    condition, becomes an empty local relation): every join and aggregate over it folds to nothing, and no job
    runs for it. An empty RDD is opaque to the optimizer, so the plans over it still ran their stages (a check
    whose driver-side table was empty, PRINCIPAL_LOOKALIKE on an estate without look-alikes: 6.1 s against 3.9 s
    at 2,000 tenants, 2026-11-28)."""
    nulls = [F.lit(None).cast(column.dataType).alias(column.name) for column in schema.fields]
    return spark.range(1).select(*nulls).where(F.lit(False))


def rows_frame(spark: SparkSession, rows: list[Any], schema: StructType) -> DataFrame:
    """Rows as a DataFrame the JVM scans without a Python worker.

    `createDataFrame(list)` makes a Python RDD: every scan of it, in every stage of every check,
    starts Python workers to unpickle rows, which is most of a small audit's time. An empty
    table is `empty_frame`; with a local master the rows go through a JSON-lines file the
    driver writes (executors share its disk); on a cluster the JSON lines go to the JVM as one
    string and become a local relation of the plan (executors get the rows with their tasks)."""
    if not rows:
        return empty_frame(spark, schema)
    local = spark.sparkContext.master.startswith("local")
    names = schema.fieldNames()
    lines = (json.dumps(dict(zip(names, row, strict=True)), separators=(",", ":")) for row in rows)
    reader = spark.read.schema(schema).option("mode", "FAILFAST")
    if not local:
        jvm = spark.sparkContext._jvm
        # One py4j call for all rows; JSON lines hold no raw newline. PySpark has no public call that
        # turns driver-side rows into a JVM Dataset without Python workers (or pandas + pyarrow), so
        # this uses its internal handles (_jvm, _jsparkSession, _jreader); pinned pyspark==4.0.0.
        strings = jvm.java.util.regex.Pattern.compile("\n").splitAsStream("\n".join(lines)).toList()
        dataset = spark._jsparkSession.createDataset(strings, jvm.org.apache.spark.sql.Encoders.STRING())
        return reader._df(reader._jreader.json(dataset))
    path = Path(tempfile.mkdtemp(prefix="frame-", dir=_scratch())) / "rows.json"
    with path.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(line + "\n")
    return reader.json(str(path))


@functools.cache
def _scratch() -> str:
    """A directory for this process's frame files, removed when it exits."""
    folder = tempfile.mkdtemp(prefix="mm2gov-audit-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def snapshot_frames(spark: SparkSession, rows: Mapping[str, Iterable[Any]], partial: Iterable[str] = ()) -> Snapshot:
    return Snapshot(**frames(spark, SNAPSHOT_SCHEMAS, rows), partial=tuple(partial))


def tenancy_frames(spark: SparkSession, rows: Mapping[str, Iterable[Any]]) -> Tenancy:
    return Tenancy(**frames(spark, TENANCY_SCHEMAS, rows))
