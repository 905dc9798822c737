"""The finding shape (CONTRACT.md "Finding"): what every detector returns.

`evidence` is a JSON object as a string (Spark has no free-form map of mixed
values); it names partitions, offsets, bindings and counts, never record keys or
values. Absent tenant or principal is "" (as violations do), so the columns are
never null and the report needs no special case.

Every detector states what its findings say about cross-tenant reach (the
required `reach` argument, `spark_audit.evidence`): the evidence then carries the
contract's `reach` (and `reach_unknown`) keys, which the report's tenant x tenant
matrix reads; `evidence.NO_REACH` for checks whose findings are not about one
tenant reaching another's data.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from spark_audit.catalog import meta
from spark_audit.evidence import Reach, with_reach

COLUMNS = ("check_id", "severity", "tenant", "cluster", "resource_type", "resource_name", "principal",
           "message", "remediation", "evidence")
FINDING_SCHEMA = StructType([StructField(name, StringType(), False) for name in COLUMNS])

ColumnLike = Column | str


def _col(value: ColumnLike) -> Column:
    return F.col(value) if isinstance(value, str) else value


def to_findings(df: DataFrame, check_id: str, *, tenant: ColumnLike, cluster: ColumnLike,
                resource_type: ColumnLike, resource_name: ColumnLike, principal: ColumnLike,
                message: Column, evidence: Column, reach: Reach, severity: Column | None = None) -> DataFrame:
    """One finding per row of `df`; strings name columns, literals go through F.lit.
    Severity and remediation come from the catalog entry of `check_id`; a detector whose
    metadata.yaml says some findings are less severe passes `severity` (a catalog severity
    name, never above the entry's). `evidence` is a struct, to which `reach` adds the
    evidence contract's fields (spark_audit.evidence)."""
    check = meta(check_id)
    values = {
        "check_id": F.lit(check.id), "severity": F.lit(check.severity) if severity is None else severity,
        "tenant": _col(tenant), "cluster": _col(cluster), "resource_type": _col(resource_type),
        "resource_name": _col(resource_name), "principal": _col(principal), "message": message,
        "remediation": F.lit(check.remediation), "evidence": F.to_json(with_reach(evidence, reach)),
    }
    return df.select(*[F.coalesce(values[name].cast("string"), F.lit("")).alias(name) for name in COLUMNS])

