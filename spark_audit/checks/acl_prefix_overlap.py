"""ACL_PREFIX_OVERLAP: a PREFIXED binding of one tenant whose prefix covers another tenant's names.

Decided on names, not on the topics that exist today: the binding's prefix P
covers tenant Y's names when a prefix Q that Y owns on that cluster starts with
P (`pay` covers `payments.`, `payments` covers `payments-eu.`), or when P itself
is a name Y owns (`payments.secret.` granted to marketing). Prefix tests are
equi-joins: Y's prefixes are exploded into their stems (tenants have hundreds of
prefixes: a broadcast) and joined with P; P's owner comes from
`ownership.owners`. Bindings are the large side and are never crossed with
anything. A reviewed grant from Y covers READ/DESCRIBE under its prefix; a
binding of an undeclared principal is ACL_STALE's. One finding per binding pattern;
its reach (spark_audit.evidence): the principal's tenant reaches every tenant whose
names the pattern covers.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_audit.checks.common import allow_bindings, declared, joined, kind_of, not_granted, who
from spark_audit.evidence import reaches
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy
from spark_audit.ownership import owners, stems

CHECK_ID = "ACL_PREFIX_OVERLAP"


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    bindings = (allow_bindings(snapshot)
                .filter((F.col("pattern_type") == "PREFIXED") & F.col("resource_type").isin("TOPIC", "GROUP"))
                .join(declared(tenancy), "principal")
                .withColumn("kind", kind_of(F.col("resource_type"))))
    covered_prefixes = F.broadcast(
        stems(tenancy.tenant_prefixes, "prefix", "resource_name")
        .select("kind", "resource_name", F.col("cluster").alias("_cluster"), F.col("tenant").alias("other"),
                F.col("prefix").alias("other_prefix")))
    wider = (bindings.join(covered_prefixes, ["kind", "resource_name"])
             .filter(F.col("_cluster").isNull() | (F.col("_cluster") == F.col("cluster"))).drop("_cluster"))
    inside = (owners(bindings.filter(F.col("kind") == "topic"), tenancy, "topic")
              .unionByName(owners(bindings.filter(F.col("kind") == "group"), tenancy, "group"))
              .filter(F.col("owner").isNotNull())
              .select(*bindings.columns, F.col("owner").alias("other"), F.col("owner_prefix").alias("other_prefix")))
    overlaps = wider.unionByName(inside).filter(F.col("other") != F.col("p_tenant"))
    overlaps = not_granted(overlaps.withColumn("_grantee", F.when(F.col("role") == "tenant", F.col("p_tenant"))),
                           tenancy, owner="other", accessor="_grantee", name="resource_name", op="operation")
    per_pattern = overlaps.groupBy("cluster", "principal", "p_tenant", "resource_type", "resource_name").agg(
        F.collect_set("operation").alias("operations"), F.collect_set("other").alias("tenants"),
        F.collect_set(F.struct(F.col("other").alias("tenant"), F.col("other_prefix").alias("prefix")))
        .alias("covers"))
    message = F.concat(who(F.col("principal"), F.col("p_tenant")), F.lit(" has "), joined(F.col("operations")),
                       F.lit(" on "), F.col("cluster"), F.lit(" "), kind_of(F.col("resource_type")),
                       F.lit(" prefix '"), F.col("resource_name"), F.lit("', which covers names of "),
                       joined(F.col("tenants")))
    evidence = F.struct(F.array_sort("operations").alias("operations"), F.array_sort("covers").alias("covers"))
    return to_findings(per_pattern, CHECK_ID, tenant="p_tenant", cluster="cluster", resource_type="resource_type",
                       resource_name="resource_name", principal="principal", message=message, evidence=evidence,
                       reach=reaches(F.col("p_tenant"), F.col("tenants")))
