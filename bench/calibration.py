"""capacity.yaml's calibration block from `bench/capacity.py --calibrate`'s figures, written by the one YAML dumper.

The figures become the block `governance/config/loader.py` reads (config.schema.Calibration): what one task
carried (`task_bytes_per_second`) and what one node runs and needs (`node`: tasks, CPU, memory, heap), with
when, by what and on which MirrorMaker 2 it was measured. Writing into an existing capacity.yaml replaces its
calibration and keeps its `limits` and `clusters` (the platform's decisions; YAML comments are not kept); a new
file gets limits that allow what was measured (a flow of `FLOW_NODES` nodes at the measured rate) and no
clusters, for the platform to edit. Either way the written document is checked against the schema first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from governance.config.schema import CapacityFile
from governance.files import YAML_DUMPER, write_public

MIB = 2**20
MEMORY_HEADROOM = 1.25  # a node's memory request and limit: its measured peak resident memory plus a quarter
MEMORY_STEP = 64 * MIB  # ... rounded up to this
CPU_STEP_MILLICORES = 100  # a node's CPU request: the cores it kept busy, rounded up to this
FLOW_NODES = 4  # a new file's limit on one flow's nodes (docs/capacity.md's example)
# a node carries `tasks` tasks if it keeps at least this share of one task's rate per task with them
PER_TASK_SHARE = 0.8


@dataclass(frozen=True)
class Measured:
    """What the calibration runs measured, reduced to what the block needs."""

    at: datetime  # when (aware)
    by: str  # the command and machine
    kafka_version: str
    task_bytes_per_second: float  # one task on one node
    node_tasks_bytes_per_second: dict[int, float]  # tasks on one node -> bytes/s that node copied
    node_cores: dict[int, float]  # tasks on one node -> cores that node's JVM kept busy
    node_peak_rss: int  # bytes: the largest resident set of a node's JVM in any run
    heap: str  # the -Xms/-Xmx the nodes ran with ("1g")


def node_tasks(measured: Measured) -> int:
    """The most tasks one node ran while each kept PER_TASK_SHARE of one task's rate (at least 1)."""
    carried = [tasks for tasks, rate in measured.node_tasks_bytes_per_second.items()
               if rate >= tasks * PER_TASK_SHARE * measured.task_bytes_per_second]
    return max([1, *carried])


def heap_bytes(heap: str) -> int:
    return int(heap[:-1]) * (2**30 if heap.endswith("g") else MIB)


def calibration(measured: Measured) -> dict[str, Any]:
    """The calibration block (config.schema.Calibration's keys and types)."""
    tasks = node_tasks(measured)
    millicores = max(CPU_STEP_MILLICORES, math.ceil(measured.node_cores[tasks] * 1000 / CPU_STEP_MILLICORES)
                     * CPU_STEP_MILLICORES)
    memory = math.ceil(max(measured.node_peak_rss, heap_bytes(measured.heap)) * MEMORY_HEADROOM / MEMORY_STEP)
    return {
        "measured_at": measured.at.isoformat(timespec="seconds"),
        "measured_by": measured.by,
        "kafka_version": measured.kafka_version,
        "task_bytes_per_second": int(measured.task_bytes_per_second),
        "node": {"tasks": tasks, "cpu": f"{millicores}m" if millicores % 1000 else str(millicores // 1000),
                 "memory": f"{memory * MEMORY_STEP // MIB}Mi", "heap": measured.heap},
    }


def capacity_document(existing: dict[str, Any] | None, block: dict[str, Any]) -> dict[str, Any]:
    """`existing` (a capacity.yaml's document) with its calibration replaced; a new document without one."""
    if existing is not None:
        return {**existing, "calibration": block}
    flow_nodes = FLOW_NODES
    return {"calibration": block,
            "limits": {"flow_bytes_per_second": block["task_bytes_per_second"] * block["node"]["tasks"] * flow_nodes,
                       "flow_nodes": flow_nodes},
            "clusters": {}}


def write_capacity(path: Path, measured: Measured) -> dict[str, Any]:
    """Write the calibration into `path` (kept: its limits and clusters); the document written."""
    existing = yaml.safe_load(path.read_text()) if path.exists() else None
    document = capacity_document(existing, calibration(measured))
    CapacityFile.model_validate(document)  # what the loader will read: refused here, not at validate time
    write_public(path, yaml.dump(document, Dumper=YAML_DUMPER, sort_keys=False).encode())
    return document
