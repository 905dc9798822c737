"""TOPIC_UNOWNED: a topic no tenant owns.

No tenant prefix (own, a flow's remote prefix on that cluster, or a flow's
`mm2gov.<flow-id>.` on its target) covers the name, so no tenant answers for
the data in it and no policy decides who may read it: a hand-made topic, a
replica from an undeclared MM2, a left-over of a removed tenant or flow. Kafka's
and mm2gov's own topics (`__*`, `_schemas`, `mm2gov.ownership`) are left out.
One finding per topic; not a tenant reaching another's data (NO_REACH).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_audit.evidence import NO_REACH
from spark_audit.findings import to_findings
from spark_audit.model import Snapshot, Tenancy
from spark_audit.ownership import is_platform_topic, owners

CHECK_ID = "TOPIC_UNOWNED"


def detect(snapshot: Snapshot, tenancy: Tenancy) -> DataFrame:
    topics = snapshot.topics.filter(~is_platform_topic(F.col("topic")))
    unowned = owners(topics, tenancy, "topic", name="topic").filter(F.col("owner").isNull())
    message = F.concat(F.lit("topic "), F.col("topic"), F.lit(" on "), F.col("cluster"),
                       F.lit(" is under no tenant's prefix"))
    return to_findings(unowned, CHECK_ID, tenant=F.lit(""), cluster="cluster", resource_type=F.lit("TOPIC"),
                       resource_name="topic", principal=F.lit(""), message=message,
                       evidence=F.struct("partitions"), reach=NO_REACH)
