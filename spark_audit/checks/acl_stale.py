"""ACL_STALE: ALLOW bindings or SCRAM users of principals the governance repo does not declare.

Declared are the tenants' principals and the MM2 principal of every declared
flow; each cluster's admin principals (super users, the audit's own) are left
out, and so is `User:*` (ACL_WILDCARD's). A stale principal is an identity
nobody answers for that can still log in or still holds rights: a left-over
from a removed tenant, flow or a hand-made grant. DENY bindings protect and are
not reported. One finding per (cluster, principal), with its binding count, a
sample of its bindings and whether a SCRAM user exists. No tenant answers for
the principal, so its findings state no tenant's reach (spark_audit.evidence.NO_REACH).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_audit.access import ANY_PRINCIPAL
from spark_audit.checks.common import allow_bindings, declared, without_admins
from spark_audit.evidence import NO_REACH
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy

CHECK_ID = "ACL_STALE"
SAMPLE = 5


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    known = declared(tenancy).select("principal")
    bindings = (without_admins(allow_bindings(snapshot).filter(F.col("principal") != ANY_PRINCIPAL), snapshot)
                .join(known, "principal", "left_anti")
                .groupBy("cluster", "principal").agg(
                    F.count(F.lit(1)).alias("acl_bindings"),
                    F.slice(F.array_sort(F.collect_list(F.struct(
                        "resource_type", "resource_name", "pattern_type", "operation", "host"))), 1, SAMPLE)
                    .alias("sample")))
    users = (without_admins(snapshot.scram_users.select(
        "cluster", F.concat(F.lit("User:"), F.col("user")).alias("principal")).distinct(), snapshot)
        .join(known, "principal", "left_anti").withColumn("scram_user", F.lit(True)))
    stale = (bindings.join(users, ["cluster", "principal"], "full")
             .withColumn("acl_bindings", F.coalesce("acl_bindings", F.lit(0)))
             .withColumn("scram_user", F.coalesce("scram_user", F.lit(False))))
    has = F.concat_ws(" and ", F.when(F.col("acl_bindings") > 0,
                                      F.concat(F.col("acl_bindings").cast("string"), F.lit(" ALLOW binding(s)"))),
                      F.when(F.col("scram_user"), F.lit("a SCRAM user")))
    message = F.concat(F.col("principal"), F.lit(" is declared by no tenant and no flow but has "), has,
                       F.lit(" on "), F.col("cluster"))
    evidence = F.struct("acl_bindings", "scram_user", "sample")
    return to_findings(stale, CHECK_ID, tenant=F.lit(""), cluster="cluster", resource_type=F.lit("USER"),
                       resource_name=F.regexp_extract("principal", "^[^:]*:(.*)$", 1), principal="principal",
                       message=message, evidence=evidence, reach=NO_REACH)
