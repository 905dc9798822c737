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
- records per exactly-once transaction (`transaction_records`): an exactly_once flow commits one transaction per
  poll of its source consumer (KIP-618's `transaction.boundary=poll`), and each commit costs a fixed few round
  trips (flush, offsets, EndTxn, markers) whatever it carries; so a poll, when there is a backlog, takes
  TRANSACTION_MS of the task's catch-up rate (catch-up rate / tasks) at RECORD_BYTES a record:
  ceil(rate / tasks * TRANSACTION_MS / 1000 / RECORD_BYTES), within [MIN_, MAX_TRANSACTION_RECORDS]. A flow
  without capacity gets DEFAULT_TRANSACTION_RECORDS. A paced feed polls what has arrived (fewer records), so
  this bounds catch-up transactions only, never adds latency (docs/generate-apply.md, "What it costs").
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr

# A calibration measured before this instant was measured for other arithmetic or by another method than
# `size_flow` and `bench/capacity.py --calibrate` now use, and is refused (config/loader.py): move it
# forward whenever either changes what `task_bytes_per_second` or `node` mean. Last: both as they are now
# (the calibration mode and this arithmetic, issue 27).
SIZING_SINCE = datetime(2026, 11, 26, tzinfo=UTC)


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


# Records per exactly-once transaction (the source consumer's max.poll.records; bench/replication.py's figures are
# in docs/generate-apply.md): Kafka's default (500) commits every 500 records, and the commits, not the copying,
# bound a catch-up. The default is about what a task at 10 MB/s gets (4,883).
TRANSACTION_MS = 250  # of the task's catch-up rate in one transaction
RECORD_BYTES = 512  # planning size of a record (smaller records: more per transaction, up to the maximum)
MIN_TRANSACTION_RECORDS = 500  # Kafka's max.poll.records default: never fewer
MAX_TRANSACTION_RECORDS = 20_000  # a transaction holds its records invisible until it commits: bounded
DEFAULT_TRANSACTION_RECORDS = 5_000  # a flow without capacity: what was measured


def transaction_records(capacity: Capacity | None) -> int:
    """The records an exactly-once flow's task polls, and so commits, in one transaction (module docstring)."""
    if capacity is None:
        return DEFAULT_TRANSACTION_RECORDS
    wanted = _ceil_div(capacity.catch_up_bytes_per_second * TRANSACTION_MS, capacity.tasks * 1000 * RECORD_BYTES)
    return min(MAX_TRANSACTION_RECORDS, max(MIN_TRANSACTION_RECORDS, wanted))


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
