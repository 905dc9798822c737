"""`bench/capacity.py --calibrate --write capacity.yaml`: the calibration block it writes is what the loader reads
back (governance/config/loader.py), into an existing capacity.yaml (its limits and clusters kept) or a new one."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import yaml

from bench.calibration import Measured, calibration, node_tasks, write_capacity
from governance.config.loader import load_inventory
from tests.tools.capacity import CAPACITY_YAML, acme_with

MEASURED = Measured(at=datetime(2026, 11, 27, 14, 5, 7, tzinfo=UTC), by="bench/capacity.py --calibrate on ci-1",
                    kafka_version="4.3.1", task_bytes_per_second=6_543_210.7,
                    node_tasks_bytes_per_second={1: 6_543_210.7, 2: 11_000_000.0},
                    node_cores={1: 0.83, 2: 1.42}, node_peak_rss=700 * 2**20, heap="1g")


def test_the_written_calibration_loads_back_and_keeps_the_platforms_limits_and_clusters(tmp_path):
    repo = acme_with(tmp_path, CAPACITY_YAML, None)
    before = yaml.safe_load(CAPACITY_YAML)
    write_capacity(repo / "capacity.yaml", MEASURED)
    capacity = load_inventory(repo).capacity
    assert capacity is not None
    read = capacity.calibration
    assert (read.measured_at, read.measured_by, read.kafka_version, read.task_bytes_per_second) == (
        MEASURED.at, MEASURED.by, "4.3.1", 6_543_210)
    # 2 tasks kept 84% of one task's rate each (>= 80%): a node runs 2, with the cores they kept busy
    assert read.node.model_dump() == {"tasks": 2, "cpu": "1500m", "memory": "1280Mi", "heap": "1g"}
    assert capacity.limits.model_dump() == before["limits"]
    assert {alias: c.model_dump() for alias, c in capacity.clusters.items()} == before["clusters"]


def test_a_new_capacity_yaml_gets_limits_that_allow_what_was_measured(tmp_path):
    repo = acme_with(tmp_path, None, None)
    write_capacity(repo / "capacity.yaml", MEASURED)
    capacity = load_inventory(repo).capacity
    assert capacity is not None
    assert capacity.calibration.task_bytes_per_second == 6_543_210
    assert capacity.limits.model_dump() == {"flow_bytes_per_second": 6_543_210 * 2 * 4, "flow_nodes": 4}
    assert capacity.clusters == {}


def test_a_node_carries_one_task_when_a_second_one_does_not_add_its_share():
    slow = replace(MEASURED, node_tasks_bytes_per_second={1: 6_000_000.0, 2: 7_000_000.0})
    assert node_tasks(slow) == 1
    assert calibration(slow)["node"] == {"tasks": 1, "cpu": "900m", "memory": "1280Mi", "heap": "1g"}
