"""TOPIC_SCOPE_MISMATCH: a remote topic whose data and name belong to different tenants, or that no flow makes.

A topic `<source>.<name>` on cluster T, `<source>` a declared cluster other
than T, is the DefaultReplicationPolicy replica of `<name>` on `<source>`. It is
reported when the tenant owning `<name>` (by prefix) differs from the tenant
owning the replica's name on T (or nobody owns it: another tenant's data landed
under a foreign or no prefix), or when the replica's name is owned through a
remote prefix but no declared `default` flow of that tenant from `<source>` to T
copies `<name>` (a topic regex matches it and no exclude_topics item does: a shadow
MM2 or a widened flow). Replicas
made by `identity` flows keep their names and cannot be told apart by name; they
are not judged here. One finding per topic. Reach (spark_audit.evidence): the
tenant owning the replica's name holds the data's owner's records; data under no
tenant's name states `reach_unknown`; an unproduced replica of the tenant's own
data is no cross-tenant reach.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_audit.checks.common import flow_copies
from spark_audit.evidence import reaches_one
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy
from spark_audit.ownership import is_platform_topic, owners

CHECK_ID = "TOPIC_SCOPE_MISMATCH"


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    aliases = F.broadcast(tenancy.clusters.select(F.col("cluster").alias("source")))
    candidates = (snapshot.topics.filter(~is_platform_topic(F.col("topic")))
                  .withColumn("source", F.substring_index("topic", ".", 1))
                  .withColumn("name", F.expr("substring(topic, length(source) + 2)"))
                  .filter((F.col("name") != "") & F.col("topic").contains("."))
                  .join(aliases, "source").filter(F.col("source") != F.col("cluster")))
    replicas = owners(candidates, tenancy, "topic", name="topic").select(
        "cluster", "topic", "partitions", "source", "name", F.col("owner").alias("replica_owner"),
        F.col("owner_origin").alias("replica_origin"))
    data = owners(replicas.select(F.col("source").alias("cluster"), "name").distinct(), tenancy, "topic",
                  name="name").select(F.col("cluster").alias("source"), "name", F.col("owner").alias("data_owner"))
    judged = replicas.join(data, ["source", "name"], "left")
    patterns = F.broadcast(tenancy.flows.filter(F.col("replication_policy") == "default").select(
        F.col("tenant").alias("replica_owner"), "source", F.col("target").alias("cluster"), "flow_id",
        "exclude_topics", F.explode("topics").alias("regex")))
    produced = (judged.join(patterns, ["replica_owner", "source", "cluster"])
                .filter(flow_copies("name", "regex", "exclude_topics"))
                .select("cluster", "topic").distinct().withColumn("produced", F.lit(True)))
    judged = judged.join(produced, ["cluster", "topic"], "left")
    foreign = F.col("data_owner").isNotNull() & ~F.col("data_owner").eqNullSafe(F.col("replica_owner"))
    unproduced = (F.col("replica_origin") == "remote") & F.col("produced").isNull()
    found = judged.filter(foreign | unproduced).withColumn("foreign", foreign)
    holder = F.coalesce(F.concat(F.lit("tenant "), F.col("replica_owner")), F.lit("no tenant"))
    message = F.when(
        F.col("foreign"),
        F.concat(F.lit("topic "), F.col("topic"), F.lit(" on "), F.col("cluster"), F.lit(" replicates "),
                 F.col("data_owner"), F.lit("'s topic "), F.col("name"), F.lit(" from "), F.col("source"),
                 F.lit(" but its name belongs to "), holder),
    ).otherwise(
        F.concat(F.lit("topic "), F.col("topic"), F.lit(" on "), F.col("cluster"), F.lit(" is a replica no declared "),
                 F.lit("flow of "), F.col("replica_owner"), F.lit(" from "), F.col("source"), F.lit(" produces")))
    evidence = F.struct("source", F.col("name").alias("source_topic"), "data_owner", "replica_owner",
                        F.coalesce("produced", F.lit(False)).alias("produced_by_declared_flow"))
    held = F.col("foreign") & F.col("replica_owner").isNotNull()
    nobodys = F.when(F.col("foreign") & F.col("replica_owner").isNull(), F.concat(
        F.col("data_owner"), F.lit("'s data under no tenant's name: who can read it is up to the ACLs on "),
        F.col("cluster")))
    return to_findings(found, CHECK_ID, tenant=F.coalesce("data_owner", "replica_owner"), cluster="cluster",
                       resource_type=F.lit("TOPIC"), resource_name="topic", principal=F.lit(""), message=message,
                       evidence=evidence,
                       reach=reaches_one(F.col("replica_owner"), F.when(held, F.col("data_owner")), nobodys))
