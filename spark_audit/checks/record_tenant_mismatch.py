"""RECORD_TENANT_MISMATCH: sampled records in one tenant's topic that say they are another tenant's.

Tenants may declare a `record_marker` {header, value} their producers set. A
record in a topic owned by tenant A is reported when
- a header equals another tenant B's marker (B's header name, B's value), or the
  snapshot's `marker` value is B's marker value: B's data sits in A's topic; or
- A declares a marker and the record carries A's header (or a marker value) that
  is neither A's value nor any tenant's: data of unknown origin.
Only record coordinates (partition, offset) and marker values go into the
evidence, never keys or values. One finding per (topic, claimed tenant). Reach
(spark_audit.evidence): the topic's owner A, and so its principals, holds B's data
(A reaches B); records of unknown origin state `reach_unknown` instead.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_audit.evidence import reaches_one
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy
from spark_audit.ownership import owners

CHECK_ID = "RECORD_TENANT_MISMATCH"
SAMPLE = 10
KEYS = ("cluster", "topic", "partition", "offset", "owner")


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    records = (owners(snapshot.records.select("cluster", "topic", "partition", "offset", "marker", "headers"),
                      tenancy, "topic", name="topic")
               .filter(F.col("owner").isNotNull()))
    markers = F.broadcast(tenancy.markers.select(F.col("tenant").alias("claimed"), "header", "value"))
    by_header = (records.select(*KEYS, F.explode("headers").alias("header", "value"))
                 .join(markers, ["header", "value"]).select(*KEYS, "claimed", "header", "value"))
    by_marker = (records.filter(F.col("marker").isNotNull()).withColumnRenamed("marker", "value")
                 .join(markers, "value").select(*KEYS, "claimed", "header", "value"))
    own = F.broadcast(tenancy.markers.select(F.col("tenant").alias("owner"), F.col("header").alias("own_header"),
                                             F.col("value").alias("own_value")))
    unknown = (records.join(own, "owner")
               .withColumn("value", F.coalesce(F.element_at("headers", F.col("own_header")), F.col("marker")))
               .filter(F.col("value").isNotNull() & (F.col("value") != F.col("own_value")))
               .join(markers.select("value"), "value", "left_anti")
               .select(*KEYS, F.lit("").alias("claimed"), F.col("own_header").alias("header"), "value"))
    claims = (by_header.unionByName(by_marker).unionByName(unknown)
              .filter(F.col("claimed") != F.col("owner"))
              .dropDuplicates([*KEYS, "claimed"]))
    per_topic = claims.groupBy("cluster", "topic", "owner", "claimed").agg(
        F.count(F.lit(1)).alias("records"), F.collect_set("header").alias("headers"),
        F.collect_set("value").alias("values"),
        F.slice(F.array_sort(F.collect_list(F.struct("partition", "offset"))), 1, SAMPLE).alias("samples"))
    claimed = F.when(F.col("claimed") == "", F.concat(F.lit("an unknown tenant ("), F.array_join("values", ", "),
                                                      F.lit(")")))
    message = F.concat(F.col("records").cast("string"), F.lit(" sampled record(s) in "), F.col("cluster"),
                       F.lit(" topic "), F.col("topic"), F.lit(" (owned by "), F.col("owner"),
                       F.lit(") are marked as "), F.coalesce(claimed, F.col("claimed")))
    evidence = F.struct("owner", F.col("claimed").alias("marked_as"), F.array_sort("headers").alias("headers"),
                        F.array_sort("values").alias("marker_values"), "records", "samples")
    return to_findings(per_topic, CHECK_ID, tenant="owner", cluster="cluster", resource_type=F.lit("TOPIC"),
                       resource_name="topic", principal=F.lit(""), message=message, evidence=evidence,
                       reach=reaches_one(F.col("owner"), F.col("claimed"), unknown=F.when(
                           F.col("claimed") == "", F.concat(F.lit("records marked "), F.array_join("values", ", "),
                                                           F.lit(": no declared tenant's marker")))))
