"""ACL_WILDCARD: an ALLOW binding for every principal (`User:*`) or on every name (LITERAL `*`).

Either opens a cluster's resources beyond any tenant boundary, now and for every
topic or principal created later. Bindings of the cluster's admin principals are
left out. A PREFIXED `*` is not a wildcard in Kafka (no name starts with `*`) and
is not reported. One finding per binding pattern (cluster, principal, resource
type, name), its operations and hosts in the evidence. Whose data it opens is every
tenant's, present and future: the evidence says so (`reach_unknown`) and names no
tenant pair; ACL_CROSS_TENANT reports the tenants the same binding reaches today.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_audit.access import ANY_PRINCIPAL, WILDCARD
from spark_audit.checks.common import allow_bindings, declared, joined, kind_of, who, without_admins
from spark_audit.evidence import EVERY_PRINCIPAL, reaches
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy

CHECK_ID = "ACL_WILDCARD"


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    wildcard_name = (F.col("pattern_type") == "LITERAL") & (F.col("resource_name") == WILDCARD)
    bindings = without_admins(allow_bindings(snapshot).filter(wildcard_name | (F.col("principal") == ANY_PRINCIPAL)),
                              snapshot)
    per_pattern = (bindings.join(declared(tenancy), "principal", "left")
                   .groupBy("cluster", "principal", "p_tenant", "resource_type", "resource_name", "pattern_type")
                   .agg(F.collect_set("operation").alias("operations"), F.collect_set("host").alias("hosts")))
    target = F.when((F.col("pattern_type") == "LITERAL") & (F.col("resource_name") == WILDCARD),
                    F.concat(F.lit("every "), kind_of(F.col("resource_type"))))
    target = target.otherwise(F.concat(F.lower("pattern_type"), F.lit(" "), kind_of(F.col("resource_type")),
                                       F.lit(" "), F.col("resource_name")))
    message = F.concat(who(F.col("principal"), F.col("p_tenant")), F.lit(" is allowed "),
                       joined(F.col("operations")), F.lit(" on "), target, F.lit(" of "), F.col("cluster"))
    evidence = F.struct(F.col("pattern_type"), F.array_sort("operations").alias("operations"),
                        F.array_sort("hosts").alias("hosts"))
    every_name = (F.col("pattern_type") == "LITERAL") & (F.col("resource_name") == WILDCARD)
    unknown = F.concat(F.when(every_name, F.concat(F.lit("every "), kind_of(F.col("resource_type")), F.lit(" of "),
                                                    F.col("cluster"), F.lit(", today's and future ones")))
                       .otherwise(F.lit("every principal, of any tenant or none")),
                       F.lit(": ACL_CROSS_TENANT names the tenants reached today"))
    accessor = F.when(F.col("principal") == ANY_PRINCIPAL, F.lit(EVERY_PRINCIPAL)).otherwise(F.col("p_tenant"))
    return to_findings(per_pattern, CHECK_ID, tenant="p_tenant", cluster="cluster", resource_type="resource_type",
                       resource_name="resource_name", principal="principal", message=message, evidence=evidence,
                       reach=reaches(accessor, F.array().cast("array<string>"), unknown))
