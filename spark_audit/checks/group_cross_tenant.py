"""GROUP_CROSS_TENANT: a consumer group has committed offsets on a tenant's topic and is not that tenant's.

Not a possibility but a fact: the group consumed the topic. The group's tenant
owns its name by group prefix (mm2gov's `mm2gov.<flow-id>.` groups included),
the topic's by topic prefix; a reviewed grant from the topic's owner to the
group's tenant covering the topic makes it legitimate. A group no tenant owns
on a tenant's topic is reported too (issue 24: it was reported by no check): no
one answers for that read, so its severity is that of the data it read
(checks.common.data_severity) and its reach is from no tenant (""). Topics no
tenant owns are TOPIC_UNOWNED's. One finding per (group, topic), its partitions and
committed offsets in the evidence; its reach (spark_audit.evidence): the
group's tenant (or no tenant) reached the topic's owner.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_audit.checks.common import data_severity, not_granted
from spark_audit.evidence import reaches_one
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy
from spark_audit.ownership import owners

CHECK_ID = "GROUP_CROSS_TENANT"
SAMPLE = 20


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    per_topic = snapshot.group_offsets.groupBy("cluster", "group", "topic").agg(
        F.count(F.lit(1)).alias("partition_count"),
        F.slice(F.array_sort(F.collect_list(F.struct("partition", "offset"))), 1, SAMPLE).alias("offsets"))
    groups = owners(per_topic, tenancy, "group", name="group").select(
        *per_topic.columns, F.col("owner").alias("group_owner"))
    both = owners(groups, tenancy, "topic", name="topic").select(
        *groups.columns, F.col("owner").alias("topic_owner"))
    crossing = both.filter(F.col("topic_owner").isNotNull() & (
        F.col("group_owner").isNull() | (F.col("group_owner") != F.col("topic_owner"))))
    crossing = not_granted(crossing.withColumn("_op", F.lit("READ")), tenancy, owner="topic_owner",
                           accessor="group_owner", name="topic", op="_op")
    unowned = F.col("group_owner").isNull()
    message = F.concat(F.lit("group "), F.col("group"),
                       F.when(unowned, F.lit(", which no tenant owns,")).otherwise(
                           F.concat(F.lit(" of "), F.col("group_owner"))),
                       F.lit(" has committed offsets on "), F.col("cluster"), F.lit(" topic "), F.col("topic"),
                       F.lit(" owned by "), F.col("topic_owner"))
    evidence = F.struct("topic", "topic_owner", "partition_count", "offsets")
    severity = F.when(unowned, data_severity(F.array("topic_owner"), tenancy)).otherwise(F.lit("critical"))
    return to_findings(crossing, CHECK_ID, tenant="group_owner", cluster="cluster", resource_type=F.lit("GROUP"),
                       resource_name="group", principal=F.lit(""), message=message, evidence=evidence,
                       reach=reaches_one(F.col("group_owner"), F.col("topic_owner")), severity=severity)
