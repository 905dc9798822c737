"""REPLICATION_GAP: within the scanned window, source records missing on the target, or duplicated there.

Pairs come from the declared flows: a source topic whose name a flow's topic
regex matches and none of its exclude_topics do (whole names, as MM2 does) and its remote topic on the flow's
target (`<source>.<name>`, or `<name>` with identity). MM2 keeps partition
numbers and record timestamps but not offsets, so records are matched per
partition by `record_hash` (key + value + timestamp, hashed at collection).
The window of a partition is the overlap of the two sides' timestamp ranges:
records newer than the target's newest are in flight, older than its oldest were
not scanned. Per hash, source count > target count is missing, target count >
source count duplicated (records only on the target are counted in the
evidence). A partition with no target records, or a cluster whose records are
partial, gives no finding: that is lag or a collection gap, not evidence.
One finding per (remote topic, partition); a flow losing or duplicating its own
tenant's records, not cross-tenant reach (NO_REACH).

Per flow, over the same windows: `source_records` (source records inside the
windows of all the flow's scanned partitions, findings or not), `missing` and
`duplicated` summed, and the rates missing / source_records and duplicated /
source_records; every finding of the flow carries them in evidence `flow`, the
report's per-flow summary reads them there (spark_audit.report.replication). A
partition with missing records is a finding of the catalog's severity; one with
duplicates only is one level lower (metadata.yaml says why): data was not lost.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from spark_audit.catalog import SEVERITIES, meta
from spark_audit.checks.common import flow_copies
from spark_audit.evidence import NO_REACH
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy

CHECK_ID = "REPLICATION_GAP"
SAMPLE = 10
PAIR = ("tenant", "flow_id", "source", "target", "source_topic", "remote_topic")


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    records = snapshot.records.filter(F.col("timestamp").isNotNull())
    partial = snapshot.partial_clusters("records")
    flows = F.broadcast(tenancy.flows.filter(~F.col("source").isin(*partial) & ~F.col("target").isin(*partial))
                        .select("tenant", "flow_id", "source", "target", "replication_policy", "exclude_topics",
                                F.explode("topics").alias("regex")))
    pairs = (records.select(F.col("cluster").alias("source"), F.col("topic").alias("source_topic")).distinct()
             .join(flows, "source").filter(flow_copies("source_topic", "regex", "exclude_topics"))
             .withColumn("remote_topic", F.when(F.col("replication_policy") == "identity", F.col("source_topic"))
                         .otherwise(F.concat_ws(".", "source", "source_topic")))
             .select(*PAIR).distinct())
    pairs = F.broadcast(pairs)  # one row per replicated topic: small
    as_source = (records.withColumnRenamed("cluster", "source").withColumnRenamed("topic", "source_topic")
                 .join(pairs, ["source", "source_topic"]).withColumn("side", F.lit("s")))
    as_target = (records.withColumnRenamed("cluster", "target").withColumnRenamed("topic", "remote_topic")
                 .join(pairs, ["target", "remote_topic"]).withColumn("side", F.lit("t")))
    side = [*PAIR, "partition"]
    window = Window.partitionBy(*side)
    is_s, is_t = F.col("side") == "s", F.col("side") == "t"
    ts = F.col("timestamp")
    both = (as_source.unionByName(as_target)
            .withColumn("s_from", F.min(F.when(is_s, ts)).over(window))
            .withColumn("t_from", F.min(F.when(is_t, ts)).over(window))
            .withColumn("s_to", F.max(F.when(is_s, ts)).over(window))
            .withColumn("t_to", F.max(F.when(is_t, ts)).over(window))
            .filter(F.col("s_from").isNotNull() & F.col("t_from").isNotNull())  # both sides have records
            .withColumn("from_ts", F.greatest("s_from", "t_from"))
            .withColumn("to_ts", F.least("s_to", "t_to"))
            .filter(ts.between(F.col("from_ts"), F.col("to_ts"))))
    per_hash = (both.groupBy(*side, "from_ts", "to_ts", "record_hash").agg(
        F.count_if(is_s).alias("n_s"), F.count_if(is_t).alias("n_t"),
        F.array_sort(F.collect_list(F.when(is_s, F.col("offset")))).alias("s_offsets"),
        F.array_sort(F.collect_list(F.when(is_t, F.col("offset")))).alias("t_offsets"))
        .withColumn("missing", F.greatest(F.col("n_s") - F.col("n_t"), F.lit(0)))
        .withColumn("duplicated", F.when(F.col("n_s") > 0, F.greatest(F.col("n_t") - F.col("n_s"), F.lit(0)))
                    .otherwise(0))
        .withColumn("not_on_source", F.when(F.col("n_s") == 0, F.col("n_t")).otherwise(0)))
    per_partition = (per_hash.groupBy(*side, "from_ts", "to_ts").agg(
        F.sum("missing").alias("missing"), F.sum("duplicated").alias("duplicated"),
        F.sum("not_on_source").alias("not_on_source"), F.sum("n_s").alias("source_records"),
        F.slice(F.array_sort(F.flatten(F.collect_list(F.when(F.col("missing") > 0, F.col("s_offsets"))))), 1, SAMPLE)
        .alias("missing_source_offsets"),
        F.slice(F.array_sort(F.flatten(F.collect_list(F.when(F.col("duplicated") > 0, F.col("t_offsets"))))), 1,
                SAMPLE).alias("duplicated_target_offsets")))
    gaps = with_flow_rates(per_partition).filter((F.col("missing") > 0) | (F.col("duplicated") > 0))
    mm2 = F.broadcast(tenancy.principals.filter(F.col("role") == "mm2")
                      .select(F.col("flow_id"), F.col("principal")))
    found = gaps.join(mm2, "flow_id", "left")
    message = F.concat(F.col("target"), F.lit(" topic "), F.col("remote_topic"), F.lit(" partition "),
                       F.col("partition").cast("string"), F.lit(": "), F.col("missing").cast("string"),
                       F.lit(" record(s) of "), F.col("source"), F.lit(" topic "), F.col("source_topic"),
                       F.lit(" missing, "), F.col("duplicated").cast("string"),
                       F.lit(" duplicated in the scanned window; flow "), F.col("flow_id"), F.lit(": "),
                       percent(F.col("flow.missing_rate")), F.lit(" missing, "),
                       percent(F.col("flow.duplicated_rate")), F.lit(" duplicated of "),
                       F.col("flow.source_records").cast("string"), F.lit(" source records"))
    evidence = F.struct("flow_id", "source", "source_topic", "partition",
                        F.struct("from_ts", "to_ts").alias("window"), "missing", "duplicated", "not_on_source",
                        "missing_source_offsets", "duplicated_target_offsets", "source_records", "flow")
    severity = F.when(F.col("missing") > 0, F.lit(meta(CHECK_ID).severity)).otherwise(F.lit(duplicates_only()))
    return to_findings(found, CHECK_ID, tenant="tenant", cluster="target", resource_type=F.lit("TOPIC"),
                       resource_name="remote_topic", principal="principal", message=message, evidence=evidence,
                       reach=NO_REACH, severity=severity)


def duplicates_only() -> str:
    """The severity of a partition with duplicates but nothing missing: one level below the catalog's
    (metadata.yaml), never below info."""
    severity = meta(CHECK_ID).severity
    return SEVERITIES[max(0, SEVERITIES.index(severity) - 1)]


def with_flow_rates(per_partition: DataFrame) -> DataFrame:
    """`per_partition` plus `flow`: struct(source_records, missing, duplicated, missing_rate, duplicated_rate,
    partitions) over every scanned partition of the row's flow (with or without a gap), in the partitions'
    own windows. A window over the flow, not a join: the partitions are computed once."""
    flow = Window.partitionBy("flow_id")
    total = {name: F.sum(name).over(flow) for name in ("source_records", "missing", "duplicated")}
    rate = {name: F.when(total["source_records"] > 0, total[name] / total["source_records"]).otherwise(F.lit(0.0))
            for name in ("missing", "duplicated")}
    return per_partition.withColumn("flow", F.struct(
        total["source_records"].alias("source_records"), total["missing"].alias("missing"),
        total["duplicated"].alias("duplicated"), rate["missing"].alias("missing_rate"),
        rate["duplicated"].alias("duplicated_rate"), F.count(F.lit(1)).over(flow).alias("partitions")))


def percent(rate: Column) -> Column:
    """0.0123 -> '1.2300%': four decimals, so a few duplicates in 100,000 records still show."""
    return F.concat(F.format_number(rate * 100, 4).cast("string"), F.lit("%"))
