"""Where a flow's MirrorMaker 2 runs its tasks, as MM2 itself records it: the flow's Connect status topic.

Every node of a flow's Connect group writes the state of each task it runs (`status-task-<connector>-<n>`:
RUNNING, UNASSIGNED when a rebalance takes it away, FAILED...) with its worker id into the flow's own status
topic (names.connect_names(flow).status), the record the Connect REST API's `/connectors/<name>/status` is
built from. MM2 in dedicated mode serves no such endpoint: its internal REST server has only the routes
followers call on the leader (task configs, fencing). With the internal REST server on, a node's worker id
is `<host>:<port>/<source>-><target>`: the address it advertises (devstack MirrorMaker.rest_address), so a
task's worker id names the node that runs it. The latest record of a task is its state.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from governance.kafka.admin import admin_client
from tests.tools.offsets import read_to_end

SOURCE_CONNECTOR = "MirrorSourceConnector"
TASK_KEY_PREFIX = "status-task-"


@dataclass(frozen=True)
class TaskStatus:
    connector: str
    task: int
    state: str
    worker_id: str

    @property
    def node_address(self) -> str:
        """`host:port` of the node that wrote it (its worker id without the `/<source>-><target>` herder)."""
        return self.worker_id.split("/", 1)[0]


def task_statuses(config: dict[str, Any], status_topic: str) -> dict[tuple[str, int], TaskStatus]:
    """The latest status of every task of the flow's connectors, by (connector, task number); deleted tasks
    (a tombstone last) are left out."""
    metadata = admin_client(config).list_topics(status_topic, timeout=10).topics[status_topic]
    records, _ = read_to_end(config, status_topic, sorted(metadata.partitions), "read_uncommitted")
    latest: dict[tuple[str, int], TaskStatus | None] = {}
    for _, _, key, value in records:  # each key lives in one partition, read in its order
        name = (key or b"").decode()
        if not name.startswith(TASK_KEY_PREFIX):
            continue
        connector, _, number = name.removeprefix(TASK_KEY_PREFIX).rpartition("-")
        status = json.loads(value) if value else None
        latest[(connector, int(number))] = TaskStatus(connector, int(number), status["state"],
                                                      status["worker_id"]) if status else None
    return {task: status for task, status in latest.items() if status is not None}


def running_by_node(statuses: dict[tuple[str, int], TaskStatus]) -> Counter[str]:
    """How many tasks each node (its address) runs."""
    return Counter(s.node_address for s in statuses.values() if s.state == "RUNNING")


def source_tasks(statuses: dict[tuple[str, int], TaskStatus]) -> dict[int, TaskStatus]:
    """The flow's replication tasks (MirrorSourceConnector's), by task number."""
    return {task: s for (connector, task), s in statuses.items() if connector == SOURCE_CONNECTOR}
