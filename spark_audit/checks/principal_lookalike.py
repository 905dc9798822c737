"""PRINCIPAL_LOOKALIKE: an undeclared principal whose canonical name is a declared one's or a reserved one's
(governance.model.names.canonical: case, blanks, invisible characters, compatibility forms), with access to
tenants' topics or groups.

ACL_STALE reports every undeclared principal at medium: a left-over. A look-alike is not a left-over but
an identity that an authority may take for another flow's MM2, another tenant's probe, a tenant's
principal or the super user (issue 24, class 6), so its reach is weighed by the data it reaches
(checks.common.data_severity) and shows in the tenant x tenant matrix from no tenant (""). Which principals
are look-alikes is decided on the driver, with the same `canonical` that validate uses: the principals
of a snapshot are few (bindings are many), and Spark has no Unicode normalisation. One finding per
(cluster, principal), with the name it imitates, the operations and the tenants whose names it reaches,
after every DENY (spark_audit.access.effective_access).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from governance.model.names import MM2_USER_PREFIX, canonical
from spark_audit.access import ANY_PRINCIPAL, effective_access
from spark_audit.checks.common import allow_bindings, data_severity, joined
from spark_audit.evidence import reaches
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy, rows_frame
from spark_audit.ownership import owned_resources

CHECK_ID = "PRINCIPAL_LOOKALIKE"
SAMPLE = 10
LOOKALIKES = StructType([StructField(name, StringType()) for name in ("principal", "imitates", "imitated")])
RESERVED_PREFIXES = ((f"User:{MM2_USER_PREFIX}", "a flow's MM2 principal (User:mm2-<flow>)"),
                     ("User:mm2gov", "mm2gov's own principals (User:mm2gov*)"))


def lookalikes(snapshot: Snapshot, tenancy: Tenancy) -> list[tuple[str, str, str]]:
    """(principal, what it imitates, the imitated principal or prefix) for every principal with a binding or
    a SCRAM user that is not declared, not an admin and not User:*, whose canonical name is a declared or
    admin principal's, or starts like a reserved prefix's while the exact name does not."""
    declared = {row.principal: f"{row.role} principal of tenant {row.tenant}"
                for row in tenancy.principals.select("principal", "role", "tenant").collect()}
    admins = {row.principal for row in snapshot.admin_principals.select("principal").distinct().collect()}
    known = {canonical(p): (p, why) for p, why in sorted(declared.items())}
    known |= {canonical(p): (p, "an admin (super user) principal") for p in sorted(admins)}
    seen = allow_bindings(snapshot).select("principal").union(
        snapshot.scram_users.select(F.concat(F.lit("User:"), F.col("user")).alias("principal"))).distinct()
    found = []
    for principal in sorted(row.principal for row in seen.collect()):
        if principal in declared or principal in admins or principal == ANY_PRINCIPAL:
            continue
        form = canonical(principal)
        if form in known:
            found.append((principal, known[form][1], known[form][0]))
            continue
        for exact, why in RESERVED_PREFIXES:
            if form.startswith(canonical(exact)) and not principal.startswith(exact):
                found.append((principal, why, f"{exact}*"))
                break
    return found


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    look = rows_frame(snapshot.acls.sparkSession, lookalikes(snapshot, tenancy), LOOKALIKES)
    resources = owned_resources(snapshot, tenancy).filter(F.col("owner").isNotNull())
    allows = allow_bindings(snapshot).join(F.broadcast(look), "principal")
    access = effective_access(allows, snapshot.acls, resources)
    per = access.groupBy("cluster", "principal", "imitates", "imitated").agg(
        F.array_sort(F.collect_set("owner")).alias("reaches_tenants"),
        F.array_sort(F.collect_set("op")).alias("operations"),
        F.slice(F.array_sort(F.collect_set(F.struct(F.col("resource_type"), F.col("resource_name")))), 1, SAMPLE)
        .alias("sample"))
    message = F.concat(F.col("principal"), F.lit(" is declared by no tenant but is named like "),
                       F.col("imitated"), F.lit(" ("), F.col("imitates"), F.lit(") and can "),
                       joined(F.col("operations")), F.lit(" names of tenant(s) "), joined(F.col("reaches_tenants")),
                       F.lit(" on "), F.col("cluster"))
    evidence = F.struct("imitated", "imitates", "reaches_tenants", "operations", "sample")
    return to_findings(per, CHECK_ID, tenant=F.lit(""), cluster="cluster", resource_type=F.lit("USER"),
                       resource_name=F.regexp_extract("principal", "^[^:]*:(.*)$", 1), principal="principal",
                       message=message, evidence=evidence, reach=reaches(F.lit(None), F.col("reaches_tenants")),
                       severity=data_severity(F.col("reaches_tenants"), tenancy))
