"""INTERNAL_TOPIC_EXPOSED: MirrorMaker 2's internal topics open to tenants, or shared between tenants.

A flow's own MM2 topics on its target are named by names.py (tenancy
`mm2_topics` and the `mm2gov.<flow-id>.` internal prefix in `tenant_prefixes`):
offset-syncs, checkpoints and heartbeats, which carry the tenant's topic and
group names and offsets, and Connect's configs, offsets and status. The legacy
names Kafka's default policy gives per cluster alias (`mm2-offset-syncs.<alias>.internal`,
`<alias>.checkpoints.internal`, `heartbeats`, `mm2-configs.*`...) and left-over
`mm2gov.` names no declared flow owns are internal too (`internal_topics`).
Two leaks:
- exposed: a principal other than the topic's MM2 can READ, WRITE, DELETE,
  ALTER or ALTER_CONFIGS it (effective access, DENY applied): another tenant's
  principal, the flow's own tenant's principals too (the tenant reads its
  translated offsets through its consumer group, never from these topics), an
  undeclared one, `User:*`, or for a flow's topics the MM2 principal of another
  flow. Admin principals are left out. One finding per (topic, principal).
- shared: a legacy or left-over internal topic that MM2 principals of two or
  more tenants can use (e.g. one `mm2-offset-syncs.cloud.internal` for every
  flow): one finding per topic.
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
from spark_audit.ownership import is_legacy_mm2_topic, is_reserved_mm2_topic, owners, topic_resources

CHECK_ID = "INTERNAL_TOPIC_EXPOSED"
EXPOSING_OPERATIONS = ("READ", "WRITE", "DELETE", "ALTER", "ALTER_CONFIGS")


def internal_topics(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    """The topics that are MM2's, with the flow that owns each (owner, owner_flow; null: no flow) and its
    role (`mm2_topic`). Fail closed: a flow's own names (`mm2_topics`) belong to that flow and names
    under mm2gov's reserved prefix are internal whatever prefix a tenant declares (a tenant's longer
    prefix cannot take them over); a legacy per-alias name only when no tenant owns it."""
    name = F.col("resource_name")
    flow_topics = F.broadcast(tenancy.mm2_topics.select(
        "cluster", F.col("topic").alias("resource_name"), F.col("role").alias("mm2_topic"),
        F.col("flow_id").alias("m_flow"), F.col("tenant").alias("m_tenant")))
    owned = owners(topic_resources(snapshot), tenancy, "topic").join(flow_topics, ["cluster", "resource_name"],
                                                                      "left")
    is_flows, by_prefix = F.col("m_flow").isNotNull(), F.col("owner_origin") == "internal"
    internal = owned.filter(is_flows | by_prefix | is_reserved_mm2_topic(name)
                            | (F.col("owner").isNull() & is_legacy_mm2_topic(name)))
    return internal.select(
        "cluster", "resource_type", "resource_name", "mm2_topic",
        F.when(is_flows, F.col("m_tenant")).when(by_prefix, F.col("owner")).alias("owner"),
        F.when(is_flows, F.col("m_flow")).when(by_prefix, F.col("owner_flow")).alias("owner_flow"))


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    internal = internal_topics(snapshot, tenancy)
    access = (without_admins(effective_access(allow_bindings(snapshot), snapshot.acls, internal), snapshot)
              .filter(F.col("op").isin(*EXPOSING_OPERATIONS))
              .join(declared(tenancy), "principal", "left"))
    per_principal = access.groupBy("cluster", "resource_name", "owner", "owner_flow", "mm2_topic", "principal",
                                   "p_tenant", "role", "p_flow").agg(F.collect_set("op").alias("operations"),
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
                         F.coalesce(F.concat(F.lit(" ("), F.coalesce(F.concat(F.col("mm2_topic"), F.lit(" topic ")),
                                                                     F.lit("")),
                                             F.lit("of flow "), F.col("owner_flow"), F.lit(")")), F.lit(""))),
        evidence=F.struct(F.lit("exposed").alias("kind"), F.col("owner_flow").alias("flow_id"), "mm2_topic",
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
