"""`mm2gov size` for people (text) and scripts (JSON): per flow what was asked and derived, per cluster the
budget and the headroom left, and the calibration it all rests on."""

from __future__ import annotations

import json
from typing import Any

from governance.model.capacity import Capacity
from governance.plan.size import ClusterSize, Direction, FlowSize, SizeReport
from governance.policy.engine import Violation


def _flow_record(flow: FlowSize) -> dict[str, Any]:
    sized = flow.capacity
    record: dict[str, Any] = {"flow": flow.flow, "tenant": flow.tenant, "source": flow.source, "target": flow.target}
    if sized is None:
        return {**record, "asked": None, "derived": None}
    return {**record,
            "asked": {"bytes_per_second": sized.bytes_per_second,
                      "catch_up_bytes_per_second": sized.catch_up_bytes_per_second,
                      "source_partitions": sized.source_partitions},
            "derived": {"tasks": sized.tasks, "nodes": sized.nodes, "cpu_per_node": sized.cpu,
                        "memory_per_node": sized.memory, "heap_per_node": sized.heap,
                        "quotas": {flow.source: {"consumer_byte_rate": sized.source_fetch_byte_rate},
                                   flow.target: {"producer_byte_rate": sized.target_produce_byte_rate}}}}


def _direction_record(direction: Direction) -> dict[str, Any]:
    return {"bytes_per_second": direction.bytes_per_second, "flows": list(direction.flows),
            "flows_without_capacity": list(direction.unbounded)}


def _cluster_record(cluster: ClusterSize) -> dict[str, Any]:
    return {"cluster": cluster.cluster, "brokers": cluster.brokers, "budget_bytes_per_second": cluster.budget,
            "into": {**_direction_record(cluster.into), "headroom_bytes_per_second": cluster.headroom_into},
            "out_of": {**_direction_record(cluster.out_of), "headroom_bytes_per_second": cluster.headroom_out_of}}


def json_report(report: SizeReport, violations: list[Violation]) -> str:
    platform = report.platform
    document = {
        "calibration": platform.calibration.model_dump(mode="json") if platform else None,
        "limits": platform.limits.model_dump(mode="json") if platform else None,
        "flows": [_flow_record(f) for f in report.flows],
        "clusters": [_cluster_record(c) for c in report.clusters],
        "violations": [v.to_record() for v in violations],
    }
    return json.dumps(document, indent=2) + "\n"


def rate(value: int) -> str:
    """Bytes per second as people read them (MB/s, decimal, as Kafka's docs count), exact value beside."""
    return f"{value / 1e6:.1f} MB/s" if value >= 100_000 else f"{value} B/s"


def _sized_line(flow: FlowSize, sized: Capacity) -> list[str]:
    partitions = "" if sized.source_partitions is None else f", {sized.source_partitions} source partitions"
    return [
        f"  {flow.flow} ({flow.tenant}, {flow.source} -> {flow.target})",
        f"    asked: {rate(sized.bytes_per_second)} steady, {rate(sized.catch_up_bytes_per_second)} catch-up"
        f"{partitions}",
        f"    derived: {sized.tasks} task(s) on {sized.nodes} node(s), each {sized.cpu} CPU, {sized.memory} memory, "
        f"{sized.heap} heap",
        f"    quotas: fetch {rate(sized.source_fetch_byte_rate)} per {flow.source} broker, produce "
        f"{rate(sized.target_produce_byte_rate)} per {flow.target} broker",
    ]


def text_report(report: SizeReport, violations: list[Violation]) -> str:
    platform = report.platform
    if platform is None:
        lines = ["calibration: none (no capacity.yaml): every flow runs one task on one node, without quotas"]
    else:
        c = platform.calibration
        lines = [f"calibration: {rate(c.task_bytes_per_second)} per MM2 task, {c.node.tasks} task(s) per node "
                 f"({c.node.cpu} CPU, {c.node.memory}, {c.node.heap} heap); MirrorMaker {c.kafka_version}, "
                 f"measured {c.measured_at.isoformat()} by {c.measured_by}",
                 f"limits: {rate(platform.limits.flow_bytes_per_second)} and {platform.limits.flow_nodes} node(s) "
                 "per flow"]
    sized = [f for f in report.flows if f.capacity]
    unsized = [f.flow for f in report.flows if not f.capacity]
    lines += ["", f"flows with capacity: {len(sized)}"]
    for flow in sized:
        assert flow.capacity is not None
        lines += _sized_line(flow, flow.capacity)
    if unsized:
        lines += [f"flows without capacity (one task, one node, no quota): {len(unsized)}",
                  *(f"  {name}" for name in unsized)]
    if report.clusters:
        lines += ["", "clusters (replication budget: the flows' catch-up rates into it, and out of it):"]
    for cluster in report.clusters:
        lines.append(f"  {cluster.cluster}: {cluster.brokers} broker(s), budget {rate(cluster.budget)}")
        for name, direction, headroom in (("into", cluster.into, cluster.headroom_into),
                                          ("out of", cluster.out_of, cluster.headroom_out_of)):
            unbounded = (f"; without capacity: {', '.join(direction.unbounded)}" if direction.unbounded else "")
            lines.append(f"    {name}: {rate(direction.bytes_per_second)} from {len(direction.flows)} flow(s), "
                         f"headroom {rate(headroom) if headroom >= 0 else '-' + rate(-headroom)}{unbounded}")
    if violations:
        lines += ["", f"capacity violations: {len(violations)}",
                  *(f"  {v.location}: {v.severity} {v.rule} [{v.tenant or 'cluster'}] {v.message}"
                    for v in violations)]
    return "\n".join(lines) + "\n"
