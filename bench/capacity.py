"""Benchmark: what one flow's MirrorMaker 2 carries at 1 task on 1 node, 2 tasks on 1 node and 2 tasks on 2 nodes.

`--neighbours`: the neighbour's latency while another tenant's flow catches up, with and without that flow's
quota (bench/neighbours.py, which says how; its options follow).

`--calibrate`: starts the local
stack's two Kafka clusters, applies and generates a governance repo whose two flows mm2gov sizes itself from
their `capacity` (docs/capacity.md): one to 1 task on 1 node, one to `tasks.max=2` on 2 nodes (MM2's internal
REST server on). Their catch-up rates are set far above what this machine copies (1 GB/s a task), so the quotas
`apply` gives their principals never bind: what is measured is MM2, not a quota. Each configuration runs its
flow's generated file (unchanged) as the file says to run it, `java -Xms<heap> -Xmx<heap>` (no devstack JIT or GC
options), on 1 or 2 JVMs; 2 tasks on 1 node is the 2-task file on one JVM.

Each run uses a fresh topic (`--partitions`, default 4): `--records` records of `--value-bytes` random bytes
are written to the source before MM2 starts (a backlog), MM2 is started and a consumer on the target times the
first to the last backlog record arriving: records/s and MB/s (key + value bytes). Every run's target must hold
every backlog record (each key with its value; copies counted: an at-least-once rebalance may copy some twice).
Printed beside each run: where MM2 ran its MirrorSourceConnector tasks (the flow's Connect status topic: Connect
balances the count of tasks per node over the flow's connectors, not each connector's), the cores MM2's JVMs, the
brokers, this process and everything else kept busy (/proc), the load average before and after, and each node's
peak resident memory. `--runs` rounds (default 1) after one warm-up round on a third of the backlog; the median
per configuration.

`--write capacity.yaml` writes the calibration block (bench/calibration.py): `task_bytes_per_second` from 1 task
on 1 node, `node` from the 2-task runs on one node, into that file (its limits and clusters kept).

Usage: python bench/capacity.py --calibrate [--records 200000] [--value-bytes 512] [--partitions 4] [--runs 1]
       [--heap 1g] [--write capacity.yaml] [--format json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

import yaml  # noqa: E402
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition  # noqa: E402

from bench.calibration import Measured, write_capacity  # noqa: E402
from bench.replication import Records, cli, fill, make_records, record_hash  # noqa: E402
from devstack import tools  # noqa: E402
from devstack.cpu import CpuSample, cores_busy, group_cpu_seconds, sample_cpu  # noqa: E402
from devstack.mirrormaker import MirrorMaker  # noqa: E402
from devstack.process import tail  # noqa: E402
from devstack.repo import tenant_document  # noqa: E402
from devstack.stack import Stack, StackSpec  # noqa: E402
from governance.files import YAML_DUMPER  # noqa: E402
from governance.kafka.admin import admin_client, create_topics  # noqa: E402
from governance.model.names import connect_names, flow_id, remote_name  # noqa: E402
from tests.tools.connect_status import source_tasks, task_statuses  # noqa: E402

SOURCE, TARGET = "source", "target"
TASK_RATE = 1_000_000_000  # bytes/s the repo's calibration says a task carries: far above this machine's
# two JVMs with C2 and a 1g heap start in a minute on a free 2-core machine, in more than two on a loaded one
START_TIMEOUT = 300
TENANTS = {1: "capone", 2: "captwo"}  # tasks -> the tenant whose flow mm2gov sizes to them


@dataclass(frozen=True)
class Shape:
    tasks: int
    nodes: int

    @property
    def name(self) -> str:
        return f"{self.tasks} task{'s' * (self.tasks > 1)}, {self.nodes} node{'s' * (self.nodes > 1)}"


SHAPES = (Shape(1, 1), Shape(2, 1), Shape(2, 2))


# -- the repo: two flows sized by mm2gov ---------------------------------------------------------------------


def capacity_yaml() -> dict[str, Any]:
    """A calibration that sizes 1 GB/s to one task and gives a node one task: the 2-task flow gets 2 nodes."""
    return {
        "calibration": {"measured_at": "2026-11-27T00:00:00Z", "measured_by": "bench/capacity.py (its own repo)",
                        "kafka_version": tools.kafka().version, "task_bytes_per_second": TASK_RATE,
                        "node": {"tasks": 1, "cpu": "1", "memory": "2Gi", "heap": "1g"}},
        "limits": {"flow_bytes_per_second": 2 * TASK_RATE, "flow_nodes": 2},
        "clusters": {alias: {"brokers": 1, "replication_bytes_per_second": 4 * TASK_RATE}
                     for alias in (SOURCE, TARGET)},
    }


def sized_flows(stack: Stack, root: Path, secrets: Path, partitions: int) -> dict[int, Path]:
    """`mm2gov apply` and `generate` on the two tenants: tasks -> the flow's generated properties file."""
    repo, out = root / "repo", root / "out"
    (repo / "tenants").mkdir(parents=True)
    (repo / "clusters.yaml").write_text(stack.governance_clusters())
    (repo / "capacity.yaml").write_text(yaml.dump(capacity_yaml(), Dumper=YAML_DUMPER))
    for tasks, tenant in TENANTS.items():
        document = tenant_document(tenant, SOURCE, TARGET)
        document["flows"][0]["capacity"] = {"bytes_per_second": tasks * TASK_RATE,
                                            "catch_up_bytes_per_second": tasks * TASK_RATE,
                                            "source_partitions": partitions}
        (repo / "tenants" / f"{tenant}.yaml").write_text(yaml.dump(document, Dumper=YAML_DUMPER, sort_keys=False))
    cli("apply", str(repo), "--secrets-dir", str(secrets))
    cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    return {tasks: out / "mm2" / f"{flow_id(tenant, SOURCE, TARGET)}.properties" for tasks, tenant in TENANTS.items()}


# -- the target side ---------------------------------------------------------------------------------------


class Arrivals(threading.Thread):
    """Reads the remote topic from its start while MM2 fills it: when the first backlog record arrived and when
    the last distinct one did, and every (key, value hash) received with its copies."""

    def __init__(self, config: dict[str, Any], topic: str, partitions: int, backlog: int) -> None:
        super().__init__(daemon=True)
        self.config, self.topic, self.partitions, self.backlog = config, topic, partitions, backlog
        self.copies: dict[tuple[bytes, int], int] = {}
        self.first: float | None = None
        self.last: float | None = None
        self.error: str | None = None
        self.stopping = threading.Event()

    def run(self) -> None:
        consumer = Consumer({**self.config, "group.id": f"bench-{self.topic}", "enable.auto.commit": False,
                             "fetch.max.bytes": 52_428_800})
        try:
            while not self.stopping.is_set():  # MM2 creates the remote topic: assign as soon as it is there
                meta = consumer.list_topics(self.topic, timeout=5).topics.get(self.topic)
                if meta is not None and meta.error is None and len(meta.partitions) == self.partitions:
                    break
                time.sleep(0.05)
            consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in range(self.partitions)])
            while not self.stopping.is_set():
                messages = consumer.consume(10_000, timeout=0.2)
                now = time.monotonic()
                for message in messages:
                    if message.error():
                        self.error = str(message.error())
                        continue
                    seen = (message.key(), record_hash(message.key(), message.value()))
                    self.copies[seen] = self.copies.get(seen, 0) + 1
                    self.first = self.first or now
                    if self.last is None and len(self.copies) == self.backlog:
                        self.last = now
        finally:
            consumer.close()

    def wait(self, log: Path, stalled: float = 120) -> None:
        """Until the last backlog record arrived; fail with MM2's log tail when nothing arrived for `stalled` s."""
        seen, since = -1, time.monotonic()
        while self.last is None:
            if len(self.copies) != seen:
                seen, since = len(self.copies), time.monotonic()
            if time.monotonic() - since > stalled or not self.is_alive():
                raise SystemExit(f"no progress for {stalled:.0f} s on {self.topic} ({seen} records there; "
                                 f"{self.error or 'no read error'}); MM2's log:\n{tail(log, 40)}")
            time.sleep(0.02)


# -- CPU and memory ----------------------------------------------------------------------------------------


def cpu_sample(stack: Stack, nodes: list[MirrorMaker]) -> CpuSample:
    sides = {f"mm2 node {n.node}": group_cpu_seconds(n.pid) if n.pid else 0.0 for n in nodes}
    sides |= {"brokers": sum(group_cpu_seconds(k.process.pid) for k in stack.kafka.values()),
              "bench": sum(os.times()[:2])}
    return sample_cpu(sides)


def load_average() -> tuple[float, float, float]:
    one, five, fifteen = Path("/proc/loadavg").read_text().split()[:3]
    return float(one), float(five), float(fifteen)


def peak_rss(pid: int | None) -> int:
    """The process's peak resident set (VmHWM), bytes; 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


# -- one run -----------------------------------------------------------------------------------------------


@dataclass
class Run:
    shape: Shape
    label: str
    records: int
    size: int
    seconds: float  # first to last backlog record on the target
    duplicates: int
    cores: dict[str, float]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]
    peak_rss: list[int]  # per node
    source_tasks_on: dict[int, str] = field(default_factory=dict)  # MirrorSourceConnector task -> node

    @property
    def rate(self) -> float:
        return self.records / self.seconds

    @property
    def bytes_per_s(self) -> float:
        return self.size / self.seconds

    @property
    def mm2_cores(self) -> float:
        return sum(v for side, v in self.cores.items() if side.startswith("mm2"))


@dataclass
class Options:
    records: int
    value_bytes: int
    partitions: int
    heap: str


def run_once(stack: Stack, shape: Shape, label: str, seed: int, opts: Options, backlog_records: int,
             generated: dict[int, Path]) -> Run:
    """One configuration on a fresh topic: backlog, MM2 on its nodes, timed, every record checked."""
    source, target = stack.kafka[SOURCE], stack.kafka[TARGET]
    tenant = TENANTS[shape.tasks]
    flow = flow_id(tenant, SOURCE, TARGET)
    topic = f"{tenant}.{label}n{shape.nodes}"
    remote = remote_name("default", SOURCE, topic)
    create_topics(admin_client(source.admin_config()), [topic], partitions=opts.partitions)
    backlog = make_records(f"b{label}-", backlog_records, opts.value_bytes, seed)
    written: Records = fill(source.admin_config(), topic, backlog, opts.partitions)
    arrivals = Arrivals(target.admin_config(), remote, opts.partitions, backlog_records)
    arrivals.start()
    load_before = load_average()
    jvm = (f"-Xms{opts.heap}", f"-Xmx{opts.heap}")  # the command the generated file documents
    nodes: list[MirrorMaker] = []
    try:
        nodes = stack.start_mirrormaker_nodes(flow, generated[shape.tasks], shape.nodes, START_TIMEOUT,
                                              jvm_options=jvm)
        before = cpu_sample(stack, nodes)
        arrivals.wait(nodes[0].log_path)
        cores = cores_busy(before, cpu_sample(stack, nodes))
        load_after = load_average()
        rss = [peak_rss(n.pid) for n in nodes]
        statuses = task_statuses(target.admin_config(), connect_names(flow).status)
        addresses = {n.rest_address: f"node {n.node}" for n in nodes}  # one node: no REST server, no address
        placed = {task: addresses.get(s.node_address, s.node_address) if len(nodes) > 1 else "node 0"
                  for task, s in source_tasks(statuses).items() if s.state == "RUNNING"}
        time.sleep(1)  # anything MM2 would still copy (a duplicate) arrives and is counted
    finally:
        for node in nodes:
            stack.stop_mirrormaker(flow, node.node)
        arrivals.stopping.set()
        arrivals.join(30)
    expected = {(key, record_hash(key, value)) for key, value in backlog}
    missing = expected - set(arrivals.copies)
    if missing or set(arrivals.copies) - expected or arrivals.error:
        raise SystemExit(f"{shape.name} run {label}: {len(missing)} backlog records missing on the target, "
                         f"{len(set(arrivals.copies) - expected)} foreign; {arrivals.error or 'no read error'}")
    for cluster, name in ((source, topic), (target, remote)):  # keep the brokers' disks and caches small
        admin = admin_client(cluster.admin_config())
        admin.delete_topics([name])[name].result(60)
    assert arrivals.first is not None and arrivals.last is not None
    return Run(shape, label, written.count, written.size, arrivals.last - arrivals.first,
               sum(arrivals.copies.values()) - len(expected), cores, load_before, load_after, rss, placed)


# -- report ------------------------------------------------------------------------------------------------


def summary(runs: list[Run]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for shape in SHAPES:
        mine = [r for r in runs if r.shape == shape]
        table[shape.name] = {
            "tasks": shape.tasks, "nodes": shape.nodes,
            "records_per_s": statistics.median(r.rate for r in mine),
            "mb_per_s": statistics.median(r.bytes_per_s for r in mine) / 1e6,
            "mm2_cores": statistics.median(r.mm2_cores for r in mine),
            # what MM2 copied per core it used: less sensitive than MB/s to what else the machine runs
            "mb_per_mm2_core_s": statistics.median(r.bytes_per_s / r.mm2_cores for r in mine) / 1e6,
            "cores_busy": {side: statistics.median(r.cores[side] for r in mine) for side in mine[0].cores},
            "peak_rss_mib": max(max(r.peak_rss) for r in mine) / 2**20,
            "duplicates": sum(r.duplicates for r in mine),
        }
    return table


def measured(runs: list[Run], heap: str) -> Measured:
    """The calibration's inputs: one task's rate (1 task, 1 node), what one node carried and used per task count."""
    one_node = {shape.tasks: [r for r in runs if r.shape == shape] for shape in SHAPES if shape.nodes == 1}
    return Measured(
        at=datetime.now(UTC), by=f"bench/capacity.py --calibrate on {socket.gethostname()} ({os.cpu_count()} cores)",
        kafka_version=tools.kafka().version,
        task_bytes_per_second=statistics.median(r.bytes_per_s for r in one_node[1]),
        node_tasks_bytes_per_second={t: statistics.median(r.bytes_per_s for r in rs) for t, rs in one_node.items()},
        node_cores={t: statistics.median(r.mm2_cores for r in rs) for t, rs in one_node.items()},
        node_peak_rss=max(max(r.peak_rss) for r in runs), heap=heap)


def print_text(runs: list[Run], table: dict[str, Any], opts: Options) -> None:
    print(f"\nruns ({opts.records} records of {opts.value_bytes} B, {opts.partitions} partitions, heap "
          f"{opts.heap}; the machine has {os.cpu_count()} cores):")
    for r in runs:
        busy = ", ".join(f"{side} {value:.2f}" for side, value in r.cores.items())
        placed = ", ".join(f"task {t} on {node}" for t, node in sorted(r.source_tasks_on.items()))
        print(f"  {r.shape.name:<17} {r.label:<3} {r.seconds:6.2f} s {r.rate:>9,.0f} records/s "
              f"{r.bytes_per_s / 1e6:6.1f} MB/s  duplicates {r.duplicates}  load {r.load_before[0]:.2f} -> "
              f"{r.load_after[0]:.2f}  cores: {busy}  peak RSS {', '.join(f'{b / 2**20:.0f}' for b in r.peak_rss)}"
              f" MiB  MirrorSourceConnector: {placed}")
    print(f"\nmedian of {len([r for r in runs if r.shape == SHAPES[0]])} run(s) per configuration:")
    print(f"  {'configuration':<17} {'records/s':>10} {'MB/s':>7} {'MM2 cores':>9} {'MB/MM2 core-s':>13} "
          f"{'peak RSS MiB':>12}  cores busy (median)")
    for name, row in table.items():
        busy = ", ".join(f"{side} {value:.2f}" for side, value in row["cores_busy"].items())
        print(f"  {name:<17} {row['records_per_s']:>10,.0f} {row['mb_per_s']:>7.1f} {row['mm2_cores']:>9.2f} "
              f"{row['mb_per_mm2_core_s']:>13.1f} {row['peak_rss_mib']:>12.0f}  {busy}")
    other = max(row["cores_busy"]["other"] for row in table.values())
    print(f"  (other = every process outside this bench's stack: up to {other:.2f} cores here"
          + (", so the figures are skewed by them)" if other >= 0.25 else ")"))


def run_json(run: Run) -> dict[str, Any]:
    return {"configuration": run.shape.name, "label": run.label, "records": run.records, "bytes": run.size,
            "seconds": run.seconds, "records_per_s": run.rate, "mb_per_s": run.bytes_per_s / 1e6,
            "duplicates": run.duplicates, "cores_busy": run.cores, "load_before": run.load_before,
            "load_after": run.load_after, "peak_rss": run.peak_rss,
            "source_tasks_on": {str(k): v for k, v in run.source_tasks_on.items()}}


def main() -> None:
    if "--neighbours" in sys.argv[1:]:  # the noisy-neighbour measurement (bench/neighbours.py), its own options
        sys.argv.remove("--neighbours")
        from bench import neighbours

        neighbours.main()
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="--neighbours [bench/neighbours.py's options]: the neighbour's latency "
                                            "while another flow catches up, with and without its quota")
    parser.add_argument("--calibrate", action="store_true",
                        help="measure 1 task/1 node, 2 tasks/1 node, 2 tasks/2 nodes")
    parser.add_argument("--records", type=int, default=200_000, help="backlog records per run")
    parser.add_argument("--value-bytes", type=int, default=512)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--runs", type=int, default=1, help="timed runs per configuration (after one warm-up)")
    parser.add_argument("--heap", default="1g", help="each node's -Xms and -Xmx (the calibration's node heap)")
    parser.add_argument("--write", type=Path, metavar="CAPACITY_YAML",
                        help="write the calibration block into this capacity.yaml (its limits and clusters kept)")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    args = parser.parse_args()
    if not args.calibrate:
        parser.error("--calibrate or --neighbours")
    if args.partitions < max(s.tasks for s in SHAPES):
        parser.error("--partitions: at least one per task (a task copies whole partitions)")
    opts = Options(args.records, args.value_bytes, args.partitions, args.heap)
    text = args.format == "text"
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-capacity-") as tmp:
        root = Path(tmp)
        stack = Stack(StackSpec(run_dir=root / "stack", components=("kafka",))).up()
        try:
            secrets = root / "secrets"
            stack.export_secret_store(secrets)
            generated = sized_flows(stack, root, secrets, args.partitions)
            for round_ in range(args.runs + 1):
                order = SHAPES[round_ % len(SHAPES):] + SHAPES[:round_ % len(SHAPES)]
                for shape in order:
                    warm = round_ == 0
                    label = "w" if warm else f"r{round_}"
                    run = run_once(stack, shape, label, seed=round_ * 1000 + shape.tasks * 10 + shape.nodes,
                                   opts=opts, backlog_records=max(1, args.records // 3) if warm else args.records,
                                   generated=generated)
                    if text:
                        print(f"{'warm-up' if warm else 'run ' + str(round_)}: {shape.name:<17} {run.rate:>9,.0f} "
                              f"records/s {run.bytes_per_s / 1e6:6.1f} MB/s", flush=True)
                    if not warm:
                        runs.append(run)
        finally:
            stack.down()
    table = summary(runs)
    written = write_capacity(args.write, measured(runs, args.heap)) if args.write else None
    if text:
        print_text(runs, table, opts)
        if written is not None:
            print(f"\nwrote the calibration into {args.write}:\n"
                  + yaml.dump({"calibration": written["calibration"]}, Dumper=YAML_DUMPER, sort_keys=False))
    else:
        print(json.dumps({"options": asdict(opts), "cores": os.cpu_count(), "runs": [run_json(r) for r in runs],
                          "configurations": table, "calibration": written and written["calibration"]}, indent=2))


if __name__ == "__main__":
    main()
