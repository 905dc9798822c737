"""ACL_CROSS_TENANT: a principal of one tenant can act on a topic or group another tenant owns.

Effective access by Kafka's rules (spark_audit.access) on the topics and groups
that exist, each owned by the tenant of its longest prefix. Principals are the
declared ones (tenant principals and each flow's MM2 principal, attributed to
the flow's tenant) plus `User:*`, which reaches every tenant's resources. A
reviewed grant (docs: `grants`) covers READ and DESCRIBE of the receiving
tenant's principals on the granted prefix; it never covers MM2 principals or
any other operation. Undeclared principals are ACL_STALE's.

One finding per (principal, resource): the operations, hosts and bindings that
give the access are the evidence. `tenant` is the tenant whose principal gains
the access (for `User:*`, the owner whose data is open). Reach (spark_audit.evidence):
the principal's tenant ("*" for `User:*`) reaches the resource's owner.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_audit.access import ANY_PRINCIPAL, effective_access, reach
from spark_audit.checks.common import allow_bindings, declared, joined, kind_of, not_granted, who
from spark_audit.evidence import EVERY_PRINCIPAL, reaches_one
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy
from spark_audit.ownership import owned_resources

CHECK_ID = "ACL_CROSS_TENANT"


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    resources = owned_resources(snapshot, tenancy).filter(F.col("owner").isNotNull())
    allows = allow_bindings(snapshot)
    accessors = allows.join(declared(tenancy), "principal").unionByName(
        allows.filter(F.col("principal") == ANY_PRINCIPAL)
        .withColumn("p_tenant", F.lit(EVERY_PRINCIPAL)).withColumn("role", F.lit("any"))
        .withColumn("p_flow", F.lit(None).cast("string")))
    suspects = reach(accessors, resources).filter(F.col("owner") != F.col("p_tenant"))
    access = effective_access(suspects, snapshot.acls, resources, keys=("owner",))
    access = not_granted(access.withColumn("_grantee", F.when(F.col("role") == "tenant", F.col("p_tenant"))),
                         tenancy, owner="owner", accessor="_grantee", name="resource_name", op="op")
    per_resource = access.groupBy("cluster", "resource_type", "resource_name", "owner", "principal", "p_tenant",
                                  "role").agg(
        F.collect_set("op").alias("operations"), F.collect_set("host").alias("hosts"),
        F.collect_set(F.struct("pattern_type", F.col("pattern").alias("resource_name"), "operation", "host"))
        .alias("bindings"))
    tenant = F.when(F.col("p_tenant") == EVERY_PRINCIPAL, F.col("owner")).otherwise(F.col("p_tenant"))
    hosts = F.when(F.array_contains("hosts", "*"), F.lit("")).otherwise(
        F.concat(F.lit(" from host "), joined(F.col("hosts"))))
    message = F.concat(who(F.col("principal"), F.when(F.col("p_tenant") != EVERY_PRINCIPAL, F.col("p_tenant"))),
                       F.lit(" can "), joined(F.col("operations")), F.lit(" "), F.col("cluster"), F.lit(" "),
                       kind_of(F.col("resource_type")), F.lit(" "), F.col("resource_name"), F.lit(" owned by "),
                       F.col("owner"), hosts)
    evidence = F.struct(F.col("owner"), F.col("p_tenant").alias("accessor_tenant"), F.col("role"),
                        F.array_sort("operations").alias("operations"), F.array_sort("hosts").alias("hosts"),
                        F.array_sort("bindings").alias("bindings"))
    return to_findings(per_resource, CHECK_ID, tenant=tenant, cluster="cluster", resource_type="resource_type",
                       resource_name="resource_name", principal="principal", message=message, evidence=evidence,
                       reach=reaches_one(F.col("p_tenant"), F.col("owner")))
