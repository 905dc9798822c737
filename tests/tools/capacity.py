"""examples/acme with capacity (docs/capacity.md), for the tests of issue 27: a capacity.yaml whose calibration
sizes payments' flow onprem -> cloud (25 MB/s catch-up) to 3 tasks on 2 nodes, and quotas of 25 MB/s on
onprem's one broker and 8,333,334 B/s on each of cloud's three."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import REPO_ROOT

ACME = REPO_ROOT / "examples" / "acme"
FLOW = "payments-onprem-to-cloud"
CAPACITY_YAML = """\
calibration:
  measured_at: 2026-11-26T10:00:00Z
  measured_by: a test, not a measurement
  kafka_version: 4.3.1
  task_bytes_per_second: 10000000
  node: {tasks: 2, cpu: "1", memory: 2Gi, heap: 1g}
limits:
  flow_bytes_per_second: 40000000
  flow_nodes: 2
clusters:
  onprem: {brokers: 1, replication_bytes_per_second: 100000000}
  onprem-dr: {brokers: 1, replication_bytes_per_second: 100000000}
  cloud: {brokers: 3, replication_bytes_per_second: 100000000}
"""
PAYMENTS_CAPACITY = ("    capacity: {bytes_per_second: 5000000, catch_up_bytes_per_second: 25000000, "
                     "source_partitions: 6}\n")


def acme_with(tmp_path: Path, capacity_yaml: str | None, payments_capacity: str | None) -> Path:
    """examples/acme, with capacity.yaml and payments' flow onprem -> cloud's capacity as given (None: none)."""
    repo = tmp_path / "acme"
    shutil.copytree(ACME, repo)
    if capacity_yaml is not None:
        (repo / "capacity.yaml").write_text(capacity_yaml)
    if payments_capacity is not None:
        payments = repo / "tenants" / "payments.yaml"
        text = payments.read_text()
        anchor = '    groups: ["payments-.*"]\n    replication_policy: default\n'
        assert anchor in text
        payments.write_text(text.replace(anchor, anchor + payments_capacity, 1))
    return repo
