"""A flow's MirrorMaker 2 sized from what it must carry and what the platform measured: computed once, here.

`policy/input.py` sizes every flow that declares `capacity` (config.schema.FlowCapacity) against the repo's
capacity.yaml (config.schema.CapacityFile) and hands the result to OPA; the capacity rules judge it, the
decision carries it back unchanged, and the resolved tenancy (`Flow.capacity`) is what every writer reads:
`tasks.max` and the node count of the dedicated MM2, the Strimzi CR's replicas, tasksMax, resources and
heap, and the principal's client quotas. Nothing re-derives these numbers elsewhere (docs/capacity.md).

The arithmetic, and why:
- tasks: the catch-up rate over what one task carried when calibrated, rounded up (at least 1). MM2's
  source connector spreads a flow's partitions over its tasks, so more tasks copy faster only while there
  are partitions to spread (the capacity_tasks_over_partitions rule);
- nodes: the tasks over the tasks one node runs, rounded up. Connect balances tasks over the nodes of the
  flow's group, and a node that dies hands its tasks to the others;
- quotas: Kafka enforces a byte-rate quota on each broker separately (KIP-13), so a flow allowed its
  catch-up rate on a cluster of N brokers gets the rate over N on each, rounded up: the MM2 principal's
  fetch quota on the source, its produce quota on the target. Partitions spread evenly over the brokers
  reach the whole rate; a skewed spread reaches less, never more.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr


class Capacity(BaseModel):
    """A flow's capacity as decided: what it asked and what mm2gov derived from the calibration."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    bytes_per_second: StrictInt  # asked: the steady rate
    catch_up_bytes_per_second: StrictInt  # asked (or the steady rate): what tasks and quotas are sized for
    source_partitions: StrictInt | None  # asked: the partitions of the flow's source topics together
    tasks: StrictInt  # tasks.max of the flow's source connector
    nodes: StrictInt  # MM2 nodes (dedicated-mode processes, Strimzi replicas) in the flow's Connect group
    cpu: StrictStr  # CPU request per node (a Kubernetes quantity)
    memory: StrictStr  # memory request and limit per node
    heap: StrictStr  # JVM heap per node (-Xms and -Xmx)
    source_fetch_byte_rate: StrictInt  # the MM2 principal's consumer_byte_rate on each source broker
    target_produce_byte_rate: StrictInt  # its producer_byte_rate on each target broker


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def size_flow(*, bytes_per_second: int, catch_up_bytes_per_second: int, source_partitions: int | None,
              task_bytes_per_second: int, tasks_per_node: int, cpu: str, memory: str, heap: str,
              source_brokers: int, target_brokers: int) -> Capacity:
    """The flow's tasks, nodes, node resources and per-broker quotas (the module docstring says why)."""
    tasks = max(1, _ceil_div(catch_up_bytes_per_second, task_bytes_per_second))
    return Capacity(
        bytes_per_second=bytes_per_second, catch_up_bytes_per_second=catch_up_bytes_per_second,
        source_partitions=source_partitions, tasks=tasks, nodes=_ceil_div(tasks, tasks_per_node),
        cpu=cpu, memory=memory, heap=heap,
        source_fetch_byte_rate=_ceil_div(catch_up_bytes_per_second, source_brokers),
        target_produce_byte_rate=_ceil_div(catch_up_bytes_per_second, target_brokers),
    )
