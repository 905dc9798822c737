"""`jmx/<tenant>.yaml`: the Prometheus JMX exporter rules of a tenant's MM2s, static tenant and flow labels."""

from __future__ import annotations

from typing import Literal, TypedDict

from governance.compile.monitoring.common import (
    METRIC_PREFIX,
    WORKER_METRIC,
)
from governance.model.tenancy import Flow


class JmxRule(TypedDict):
    """One exporter rule: an MBean pattern, the series it becomes, and its static labels."""

    pattern: str
    name: str
    type: Literal["GAUGE"]
    labels: dict[str, str]


class JmxExporterConfig(TypedDict):
    includeObjectNames: list[str]
    lowercaseOutputName: bool
    lowercaseOutputLabelNames: bool
    rules: list[JmxRule]


# The MBeans the rules below read, as JMX ObjectName patterns: without them the exporter reads every attribute of
# every MBean of the JVM (each consumer's, producer's and task's) at each scrape and drops what no rule matches,
# about 2.7 times the MM2's CPU a scrape (bench/jmx_scrape.py). Types only, no tenant's or cluster's name in
# them: each flow has its own MM2 JVM, and the rules pick the flow.
INCLUDED_MBEANS = ("kafka.connect:type=connect-coordinator-metrics,*",
                   "kafka.connect.mirror:type=MirrorSourceConnector,*")


def source_pattern(flow: Flow) -> str:
    """MirrorSourceConnector's per-partition MBeans of this flow's source and target: (topic, partition, attribute)."""
    return (f"kafka.connect.mirror<type=MirrorSourceConnector, source={flow.source}, target={flow.target}, "
            r"topic=(.+), partition=([0-9]+)><>([a-z-]+)")


def worker_pattern(flow: Flow) -> str:
    """The flow's Connect worker in its group: MM2 names its client `<source>-><target>` (quoted in the MBean)."""
    return (f'kafka.connect<type=connect-coordinator-metrics, client-id="?{flow.source}->{flow.target}"?>'
            "<>assigned-tasks")


def jmx_exporter_config(tenant: str, flows: list[Flow]) -> JmxExporterConfig:
    rules: list[JmxRule] = []
    for flow in flows:
        static = {"tenant": tenant, "flow": flow.id}
        rules += [
            {"pattern": worker_pattern(flow), "name": WORKER_METRIC, "type": "GAUGE", "labels": static},
            {"pattern": source_pattern(flow), "name": METRIC_PREFIX + "$3", "type": "GAUGE",
             "labels": {**static, "source": flow.source, "target": flow.target, "topic": "$1", "partition": "$2"}},
        ]
    return {"includeObjectNames": list(INCLUDED_MBEANS), "lowercaseOutputName": True,
            "lowercaseOutputLabelNames": True, "rules": rules}
