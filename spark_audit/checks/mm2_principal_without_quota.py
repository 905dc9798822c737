"""MM2_PRINCIPAL_WITHOUT_QUOTA: a sized flow's MM2 principal runs on a broker without its client quota, or with a
higher one than the repo sets.

A flow with `capacity` gets its MM2 principal's fetch quota (`consumer_byte_rate`) on the source and produce
quota (`producer_byte_rate`) on the target (compile/quotas.py, tenancy `quotas`), so its catch-up never takes
more than its share of the brokers. Missing there, or above the repo's value, the flow catching up on a backlog
takes whatever the brokers give it and its neighbours' flows between the same clusters slow down with it.
One finding per (cluster, MM2 principal, quota key) missing or above; a stricter quota on the broker is not a
finding (it limits the flow, not its neighbours: `mm2gov drift` reports it). A cluster whose quotas were not
collected gives none. Flows without capacity have no quota to hold (the policy's `capacity_missing` says so).
The flow's own tenant's data is not at stake, nobody else's either: NO_REACH.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_audit.evidence import NO_REACH
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy

CHECK_ID = "MM2_PRINCIPAL_WITHOUT_QUOTA"
RESOURCE_TYPE = "QUOTA"  # the finding is about one quota key of the principal's `user` entity


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    mm2 = F.broadcast(tenancy.principals.filter(F.col("role") == "mm2").select("principal", "flow_id"))
    wanted = (tenancy.quotas.join(mm2, "principal")
              .filter(~F.col("cluster").isin(snapshot.partial_clusters("quotas")))
              .withColumnRenamed("value", "wanted"))
    live = snapshot.quotas.withColumnRenamed("value", "live")
    found = (wanted.join(live, ["cluster", "principal", "key"], "left")
             .filter(F.col("live").isNull() | (F.col("live") > F.col("wanted"))))
    wanted_text = F.format_number("wanted", 0)
    problem = F.when(F.col("live").isNull(), F.concat(F.lit("has no "), F.col("key"), F.lit(" quota on "),
                                                      F.col("cluster"), F.lit("; the repo sets ")))
    problem = problem.otherwise(F.concat(F.lit("has "), F.col("key"), F.lit(" "), F.format_number("live", 0),
                                         F.lit(" on "), F.col("cluster"), F.lit(", above the repo's ")))
    message = F.concat(F.col("principal"), F.lit(" (MM2 of flow "), F.col("flow_id"), F.lit(") "), problem,
                       wanted_text, F.lit(" per broker: its catch-up is not held to its share"))
    evidence = F.struct("flow_id", "key", "wanted", "live")
    return to_findings(found, CHECK_ID, tenant="tenant", cluster="cluster", resource_type=F.lit(RESOURCE_TYPE),
                       resource_name="key", principal="principal", message=message, evidence=evidence,
                       reach=NO_REACH)
