"""INTERNAL_TOPIC_EXPOSED: MirrorMaker 2's internal topics open to tenants, or shared between tenants.

MM2 and Connect internal topics (offset-syncs, checkpoints, heartbeats,
mm2-configs/offsets/status, mm2gov's `mm2gov.<flow-id>.*`) carry other
tenants' topic and group names, offsets and connector configuration. Two leaks:
- exposed: a principal other than the topic's MM2 can READ, WRITE, DELETE,
  ALTER or ALTER_CONFIGS it (effective access, DENY applied): a tenant
  principal, an undeclared one, `User:*`, or for `mm2gov.<flow-id>.` topics the
  MM2 principal of another flow. Admin principals are left out. One finding per
  (topic, principal).
- shared: a legacy internal topic (not `mm2gov.<flow-id>.`) that MM2 principals
  of two or more tenants can use (e.g. one `mm2-offset-syncs.cloud.internal`
  for every flow): one finding per topic.
A name a tenant owns by its own or remote prefix is that tenant's topic, not MM2's.
Reach (spark_audit.evidence): exposed, the principal's tenant ("*" for `User:*`, ""
undeclared) reaches the flow's tenant, or `reach_unknown` for a topic no flow owns;
shared, each of the tenants reaches the others.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_audit.access import ANY_PRINCIPAL, effective_access
from spark_audit.checks.common import allow_bindings, declared, joined, who, without_admins
from spark_audit.evidence import EVERY_PRINCIPAL, among, reaches_one
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy
from spark_audit.ownership import is_mm2_internal_topic, owners, topic_resources

CHECK_ID = "INTERNAL_TOPIC_EXPOSED"
EXPOSING_OPERATIONS = ("READ", "WRITE", "DELETE", "ALTER", "ALTER_CONFIGS")


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    internal = (owners(topic_resources(snapshot).filter(is_mm2_internal_topic(F.col("resource_name"))), tenancy,
                       "topic")
                .filter(F.col("owner").isNull() | (F.col("owner_origin") == "internal")))
    access = (without_admins(effective_access(allow_bindings(snapshot), snapshot.acls, internal), snapshot)
              .filter(F.col("op").isin(*EXPOSING_OPERATIONS))
              .join(declared(tenancy), "principal", "left"))
    per_principal = access.groupBy("cluster", "resource_name", "owner", "owner_flow", "principal", "p_tenant", "role",
                                   "p_flow").agg(F.collect_set("op").alias("operations"),
                                                 F.collect_set("host").alias("hosts"))
    is_mm2 = F.col("role") == "mm2"
    its_own_mm2 = is_mm2 & (F.col("owner_flow").isNull() | (F.col("p_flow") == F.col("owner_flow")))
    exposed = per_principal.filter(~F.coalesce(its_own_mm2, F.lit(False)))
    accessor = F.when(F.col("principal") == ANY_PRINCIPAL, F.lit(EVERY_PRINCIPAL)).otherwise(F.col("p_tenant"))
    unowned = F.when(F.col("owner").isNull(), F.lit(
        "an internal topic no flow owns: it carries the topic and group names and offsets of every flow using it"))
    exposed_findings = to_findings(
        exposed, CHECK_ID, tenant=F.coalesce("p_tenant", "owner"), cluster="cluster",
        resource_type=F.lit("TOPIC"), resource_name="resource_name", principal="principal",
        message=F.concat(who(F.col("principal"), F.col("p_tenant")), F.lit(" can "), joined(F.col("operations")),
                         F.lit(" MirrorMaker 2 internal topic "), F.col("resource_name"), F.lit(" on "),
                         F.col("cluster"),
                         F.coalesce(F.concat(F.lit(" (of flow "), F.col("owner_flow"), F.lit(")")), F.lit(""))),
        evidence=F.struct(F.lit("exposed").alias("kind"), F.col("owner_flow").alias("flow_id"),
                          F.array_sort("operations").alias("operations"), F.array_sort("hosts").alias("hosts")),
        reach=reaches_one(accessor, F.col("owner"), unowned))
    shared = (per_principal.filter(is_mm2 & F.col("owner_flow").isNull())
              .groupBy("cluster", "resource_name").agg(F.collect_set("p_tenant").alias("tenants"),
                                                       F.collect_set("principal").alias("principals"))
              .filter(F.size("tenants") > 1))
    shared_findings = to_findings(
        shared, CHECK_ID, tenant=F.lit(""), cluster="cluster", resource_type=F.lit("TOPIC"),
        resource_name="resource_name", principal=F.lit(""),
        message=F.concat(F.lit("MirrorMaker 2 internal topic "), F.col("resource_name"), F.lit(" on "),
                         F.col("cluster"), F.lit(" is shared by the MM2 principals of tenants "),
                         joined(F.col("tenants"))),
        evidence=F.struct(F.lit("shared").alias("kind"), F.array_sort("tenants").alias("tenants"),
                          F.array_sort("principals").alias("principals")),
        reach=among(F.col("tenants")))
    return exposed_findings.unionByName(shared_findings)
