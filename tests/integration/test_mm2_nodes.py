"""One flow run by two MirrorMaker 2 nodes, on real brokers: tasks on both, one node SIGKILLed, restarted.

The flow is sized by mm2gov itself: its `capacity` (2 MB/s to catch up, 4 source partitions) against a
capacity.yaml whose calibration gives one task 1 MB/s and a node one task, so `generate` writes
`tasks.max=2` and MM2's internal REST server into the flow's file, and `apply` its quotas; the stack runs that
file (only MM2's intervals shortened) on two JVMs. A sequence-numbered feed runs through the whole test.

What MM2 guarantees, and what is asserted (the flow's Connect status topic, where each node records the tasks
it runs under its worker id, is the witness: tests/tools/connect_status.py):
- both nodes are members of the flow's Connect group and run its tasks, balanced: Connect balances the number
  of tasks per node over all the flow's connectors (source, checkpoint, heartbeat), not each connector's
  tasks, so which node runs which MirrorSourceConnector task is Connect's choice (logged);
- the node running MirrorSourceConnector-0 is killed with SIGKILL: once Connect noticed (session timeout) and
  waited `scheduled.rebalance.max.delay.ms` (model/mm2_settings.py), the survivor runs every task;
- the killed node, started again on the same file, rejoins: a new member (a new port, so a new worker id)
  that runs tasks again, the counts balanced;
- the feed arrives whole on the target: 0 records lost; at least once, the crash may copy some twice
  (counted and logged, not bounded); exactly once (the same flow with `delivery: exactly_once`, the target
  read committed), 0 duplicates: the survivor fences the dead node's task producers through the leader.

Both deliveries run at the same time, each its own tenant's flow (one repo) on its own two nodes, one thread each
(`runs`): most of a run is waiting on Connect (session timeout, rebalance delays), and those waits overlap. Each
delivery is its own test, which takes its run's outcome.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import javaproperties
import pytest
import yaml

from devstack.mirrormaker import MirrorMaker, node_key
from devstack.repo import write_stack_repo
from governance.files import YAML_DUMPER
from governance.kafka.admin import admin_client, create_topics
from governance.model.names import connect_names, flow_id
from tests.conftest import run_cli
from tests.integration.feeder import Feeder, value
from tests.integration.test_replication_policy import paced
from tests.tools.connect_status import SOURCE_CONNECTOR, TaskStatus, running_by_node, source_tasks, task_statuses
from tests.tools.offsets import read_to_end, total_end_offset
from tests.tools.wait import wait_for

pytestmark = pytest.mark.usefixtures("decided_by_warm_opa")  # its mm2gov runs ask one warm OPA (tests/conftest.py)

log = logging.getLogger(__name__)

PARTITIONS = 4
NODES = 2
BATCH, PACE_SECONDS = 20, 0.1  # ~200 records/s: the feed runs through every phase, and is read whole at the end
CAPACITY = {"bytes_per_second": 2_000_000, "catch_up_bytes_per_second": 2_000_000, "source_partitions": PARTITIONS}
CAPACITY_FILE = {
    "calibration": {"measured_at": "2026-11-27T10:00:00Z", "measured_by": "a test, not a measurement",
                    "kafka_version": "4.3.1", "task_bytes_per_second": 1_000_000,
                    "node": {"tasks": 1, "cpu": "1", "memory": "1Gi", "heap": "512m"}},
    "limits": {"flow_bytes_per_second": 10_000_000, "flow_nodes": NODES},
    "clusters": {alias: {"brokers": 1, "replication_bytes_per_second": 100_000_000} for alias in ("source", "target")},
}
# Connect notices a SIGKILLed node after its session timeout (10 s), then holds its tasks for
# scheduled.rebalance.max.delay.ms (10 s) before handing them over: a minute is ample on a loaded machine
FAILOVER_TIMEOUT = 120


DELIVERIES = ("at_least_once", "exactly_once")


@pytest.fixture(scope="module")
def flows(stack, tmp_path_factory) -> Iterator[dict[str, dict[str, Any]]]:
    """Per delivery, its tenant's sized flow (one repo, both tenants) applied and generated, its topic created, its
    feed started (and stopped at the end)."""
    tenants = {delivery: f"nodes{uuid.uuid4().hex[:5]}" for delivery in DELIVERIES}
    root = tmp_path_factory.mktemp("mm2-nodes")
    repo, secrets, out = root / "repo", root / "secrets", root / "out"
    write_stack_repo(stack, repo, tenants.values())
    for delivery, tenant in tenants.items():
        tenant_file = repo / "tenants" / f"{tenant}.yaml"
        document = yaml.safe_load(tenant_file.read_text())
        document["flows"][0] |= {"capacity": CAPACITY, "delivery": delivery}
        tenant_file.write_text(yaml.dump(document, Dumper=YAML_DUMPER))
    (repo / "capacity.yaml").write_text(yaml.dump(CAPACITY_FILE, Dumper=YAML_DUMPER))
    stack.export_secret_store(secrets)
    source, target = stack.kafka["source"], stack.kafka["target"]
    create_topics(admin_client(source.admin_config()), [f"{t}.events" for t in tenants.values()],
                  partitions=PARTITIONS)
    applied = run_cli("apply", str(repo), "--secrets-dir", str(secrets))
    assert applied.returncode == 0, applied.stderr
    generated = run_cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    assert generated.returncode == 0, generated.stderr
    prepared: dict[str, dict[str, Any]] = {}
    try:
        for delivery, tenant in tenants.items():
            flow, topic = flow_id(tenant, "source", "target"), f"{tenant}.events"
            text = (out / "mm2" / f"{flow}.properties").read_text()
            settings = javaproperties.loads(text)
            assert settings["source->target.tasks.max"] == "2"
            assert settings["dedicated.mode.enable.internal.rest"] == "true"
            properties = root / f"{flow}.properties"
            properties.write_text(paced(text))
            feeder = Feeder(source.admin_config(), {tenant: topic}, partitions=PARTITIONS, batch=BATCH,
                            pace=PACE_SECONDS)
            feeder.start()
            prepared[delivery] = {
                "delivery": delivery, "tenant": tenant, "flow": flow, "topic": topic, "remote": f"source.{topic}",
                "feeder": feeder, "properties": properties, "status": connect_names(flow).status, "target": target}
        yield prepared
    finally:
        for flow in prepared.values():
            flow["feeder"].halt.set()
            flow["feeder"].join(60)


@pytest.fixture(scope="module")
def runs(stack, flows) -> Iterator[dict[str, Future[tuple[set[bytes], Counter[bytes]]]]]:
    """Both deliveries' runs (`two_nodes_kill_and_restart`) at the same time, one thread each: their waits on
    Connect (the session timeout, the rebalance delays) overlap. Each test takes its delivery's outcome."""
    with ThreadPoolExecutor(len(flows), thread_name_prefix="mm2-nodes") as pool:
        yield {delivery: pool.submit(two_nodes_kill_and_restart, stack, flow) for delivery, flow in flows.items()}
    # leaving the pool waits for both runs: each stops its nodes whatever happened


def statuses(flow: dict[str, Any]) -> dict[tuple[str, int], TaskStatus]:
    return task_statuses(flow["target"].admin_config(), flow["status"])


def all_running(flow: dict[str, Any], on: set[str]) -> dict[tuple[str, int], TaskStatus] | None:
    """The flow's task statuses once both its source tasks and every other task run, each on a node of `on`
    (addresses), and every node of `on` runs one; else None."""
    found = statuses(flow)
    running = {s.node_address for s in found.values() if s.state == "RUNNING"}
    if (len(source_tasks(found)) == 2 and all(s.state == "RUNNING" for s in found.values()) and running == on):
        return found
    return None


def balanced(counts: Counter[str]) -> bool:
    return max(counts.values()) - min(counts.values()) <= 1


def two_nodes_kill_and_restart(stack, flow: dict[str, Any]) -> tuple[set[bytes], Counter[bytes]]:
    """The flow on two nodes, the node running MirrorSourceConnector-0 SIGKILLed, then started again, the feed
    stopped: what was fed (its values) and what arrived (each value's copies on the target). Asserts each phase."""
    nodes: list[MirrorMaker] = []
    try:
        nodes = stack.start_mirrormaker_nodes(flow["flow"], flow["properties"], NODES)
        addresses = [node.rest_address for node in nodes]
        assert all(addresses) and len(set(addresses)) == NODES, addresses  # each JVM its own REST port

        spread = wait_for("every task running, on both nodes", lambda: all_running(flow, set(addresses)), 180, 1)
        counts = running_by_node(spread)
        log.warning("%s, two nodes %s: tasks per node %s; %s on %s", flow["delivery"], addresses, dict(counts),
                    SOURCE_CONNECTOR, {t: s.node_address for t, s in source_tasks(spread).items()})
        assert balanced(counts), counts

        victim = next(i for i, a in enumerate(addresses) if a == source_tasks(spread)[0].node_address)
        survivor = addresses[1 - victim]
        # the kill lands while the nodes copy the live feed: what was produced before the tasks ran is on the target
        produced = flow["feeder"].produced
        wait_for("the nodes copying the feed", lambda: total_end_offset(
            flow["target"].admin_config(), flow["remote"], range(PARTITIONS)) >= produced, 120, 1)
        produced_at_kill = flow["feeder"].produced
        stack.kill_mirrormaker(flow["flow"], victim)
        after = wait_for(f"node {survivor} running every task", lambda: all_running(flow, {survivor}),
                         FAILOVER_TIMEOUT, 1)
        assert {s.node_address for s in after.values()} == {survivor}
        assert flow["feeder"].produced > produced_at_kill, "the feed stopped: nothing was copied across the kill"

        restarted = stack.start_mirrormaker(flow["flow"], flow["properties"], node=victim)
        back = restarted.rest_address
        assert back and back not in addresses, back  # a new member: a new port, a new worker id
        rejoined = wait_for(f"node {back} rejoined and running tasks",
                            lambda: all_running(flow, {survivor, back}), FAILOVER_TIMEOUT, 1)
        log.warning("%s, after the restart: tasks per node %s; %s on %s", flow["delivery"],
                    dict(running_by_node(rejoined)), SOURCE_CONNECTOR,
                    {t: s.node_address for t, s in source_tasks(rejoined).items()})
        assert balanced(running_by_node(rejoined)), running_by_node(rejoined)

        feeder = flow["feeder"]
        feeder.halt.set()
        feeder.join(60)
        assert feeder.error is None, feeder.error
        expected = {value(flow["tenant"], i) for i in range(feeder.produced)}
        wait_for("as many records on the target as were fed", lambda: total_end_offset(
            flow["target"].admin_config(), flow["remote"], range(PARTITIONS)) >= len(expected), 300, 1)
        copies = wait_for("the whole feed on the target", lambda: arrived(flow, expected), 300, 2)
    finally:
        for node in range(NODES):
            if node_key(flow["flow"], node) in stack.mirrormakers:
                stack.stop_mirrormaker(flow["flow"], node)
    return expected, copies


@pytest.mark.parametrize("delivery", DELIVERIES)
def test_two_nodes_share_the_flow_survive_a_sigkill_and_take_the_restarted_node_back(runs, delivery):
    """Per delivery, from its run beside the other's (`runs`): every phase asserted there, then the feed whole."""
    expected, copies = runs[delivery].result()
    duplicated = sum(n - 1 for n in copies.values())
    log.warning("feed (%s): %d records produced, %d on the target, %d missing, %d duplicated", delivery,
                len(expected), sum(copies.values()), len(expected - set(copies)), duplicated)
    assert set(copies) == expected  # 0 lost, nothing foreign
    if delivery == "exactly_once":  # read committed: the killed node's open transactions were aborted
        assert duplicated == 0


def arrived(flow: dict[str, Any], expected: set[bytes]) -> Counter[bytes] | None:
    """The target's values with their copies once every expected one is there."""
    records, _ = read_to_end(flow["target"].admin_config(), flow["remote"], range(PARTITIONS))
    copies = Counter(record_value for *_, record_value in records)
    return copies if expected <= set(copies) else None
