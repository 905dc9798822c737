"""Benchmark: how much a flow's quota protects its neighbour while it catches up (issue 27, item 8).

Two tenants' flows between the local stack's two Kafka clusters, each generated and applied by mm2gov (`apply`
grants, sets the quotas; `generate` writes the MM2 files), each run by its own dedicated MM2. Tenant B's flow
carries a steady paced feed (`--rate` records/s of `--value-bytes`) the whole time; its latency is each record's
arrival on the target minus its CreateTime (MM2 keeps the source timestamp). Three phases, in one run:

1. idle: B alone (A's MM2 stopped) for `--seconds`, after as long again to warm up;
2. A unthrottled: A's flow catches up on a backlog of `--backlog-mb` with no quota on its MM2 principal (the
   repo without A's capacity, applied: `apply` removes the quotas it owns);
3. A at its quota: a fresh backlog of the same size, A's flow with `capacity` (its catch-up rate `--quota`
   bytes/s), applied: its MM2 principal's fetch quota on the source, produce quota on the target.

B's p50/p99 latency in each phase, the ratio to idle, A's catch-up rate and the cores each side used. Every B
record must arrive (a lost one fails the run); A's backlog is checked complete on the target.

Also `python bench/capacity.py --neighbours [options]`.

Usage: python bench/neighbours.py [--backlog-mb 40] [--quota 2000000] [--rate 200] [--seconds 20]
       [--value-bytes 1000] [--partitions 3] [--format json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

import yaml  # noqa: E402
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition  # noqa: E402

from bench.replication import cli, cpu_sample, percentile  # noqa: E402
from devstack import tools  # noqa: E402
from devstack.cpu import cores_busy  # noqa: E402
from devstack.repo import tenant_document  # noqa: E402
from devstack.stack import Stack, StackSpec  # noqa: E402
from governance.files import YAML_DUMPER  # noqa: E402
from governance.kafka.admin import admin_client, create_topics  # noqa: E402
from governance.model.names import flow_id  # noqa: E402

SOURCE, TARGET = "source", "target"
A, B = "nbnoisy", "nbquiet"
B_CATCH_UP = 100_000_000  # B's own quota: far above its feed, so only A's quota is measured


def capacity_yaml() -> dict[str, Any]:
    return {
        "calibration": {"measured_at": "2026-11-27T00:00:00Z", "measured_by": "bench/neighbours.py (its own repo)",
                        "kafka_version": tools.kafka().version, "task_bytes_per_second": 1_000_000_000,
                        "node": {"tasks": 2, "cpu": "1", "memory": "2Gi", "heap": "1g"}},
        "limits": {"flow_bytes_per_second": 1_000_000_000, "flow_nodes": 2},
        "clusters": {alias: {"brokers": 1, "replication_bytes_per_second": 2_000_000_000}
                     for alias in (SOURCE, TARGET)},
    }


def write_repo(stack: Stack, repo: Path, partitions: int, a_quota: int | None) -> None:
    """The two tenants; B always sized (its quota far above its feed), A sized to `a_quota` or not at all."""
    (repo / "tenants").mkdir(parents=True, exist_ok=True)
    (repo / "clusters.yaml").write_text(stack.governance_clusters())
    (repo / "capacity.yaml").write_text(yaml.dump(capacity_yaml(), Dumper=YAML_DUMPER))
    for tenant, rate in ((A, a_quota), (B, B_CATCH_UP)):
        document = tenant_document(tenant, SOURCE, TARGET)
        if rate is not None:
            document["flows"][0]["capacity"] = {"bytes_per_second": rate, "catch_up_bytes_per_second": rate,
                                                "source_partitions": partitions}
        (repo / "tenants" / f"{tenant}.yaml").write_text(yaml.dump(document, Dumper=YAML_DUMPER, sort_keys=False))


def apply_and_generate(repo: Path, out: Path, secrets: Path) -> None:
    cli("apply", str(repo), "--secrets-dir", str(secrets))
    cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))


class Reader(threading.Thread):
    """Reads a remote topic from its start: each record's arrival latency (ms) and how many arrived."""

    def __init__(self, config: dict[str, Any], topic: str, partitions: int) -> None:
        super().__init__(daemon=True)
        self.config, self.topic, self.partitions = config, topic, partitions
        self.arrivals: list[tuple[float, float, int]] = []  # (monotonic arrival, latency ms, value bytes)
        self.halt = threading.Event()

    def run(self) -> None:
        consumer = Consumer({**self.config, "group.id": f"bench-{self.topic}", "enable.auto.commit": False})
        try:
            while not self.halt.is_set():
                meta = consumer.list_topics(self.topic, timeout=5).topics.get(self.topic)
                if meta is not None and meta.error is None and len(meta.partitions) == self.partitions:
                    break
                time.sleep(0.05)
            consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in range(self.partitions)])
            while not self.halt.is_set():
                messages = consumer.consume(10_000, timeout=0) or [m for m in [consumer.poll(0.2)] if m]
                now, wall_ms = time.monotonic(), time.time() * 1000
                for message in messages:
                    if message.error() is None:
                        self.arrivals.append((now, wall_ms - message.timestamp()[1], len(message.value() or b"")))
        finally:
            consumer.close()

    def wait_for(self, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while len(self.arrivals) < count:
            if time.monotonic() > deadline:
                raise SystemExit(f"{self.topic}: {len(self.arrivals)} of {count} records arrived in {timeout:.0f} s")
            time.sleep(0.05)


class Feed(threading.Thread):
    """B's steady feed: `rate` records/s, round-robin over the partitions, until halted."""

    def __init__(self, config: dict[str, Any], topic: str, rate: int, value_bytes: int, partitions: int) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({**config, "acks": "all", "linger.ms": 0})
        self.topic, self.rate, self.value, self.partitions = topic, rate, b"q" * value_bytes, partitions
        self.sent = 0
        self.halt = threading.Event()

    def run(self) -> None:
        began = time.monotonic()
        while not self.halt.is_set():
            if (wait := began + self.sent / self.rate - time.monotonic()) > 0:
                time.sleep(wait)
            self.producer.produce(self.topic, value=self.value, partition=self.sent % self.partitions)
            self.producer.poll(0)
            self.sent += 1
        if self.producer.flush(60) != 0:
            raise SystemExit(f"{self.topic}: records left unsent")


def fill(config: dict[str, Any], topic: str, count: int, value_bytes: int, partitions: int) -> None:
    producer = Producer({**config, "linger.ms": 20, "batch.size": 1_000_000, "acks": "all",
                         "queue.buffering.max.messages": 500_000})
    value = b"n" * value_bytes
    for i in range(count):
        while True:
            try:
                producer.produce(topic, value=value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(120) != 0:
        raise SystemExit(f"could not write the backlog to {topic}")


def b_latency(reader: Reader, since: float, until: float) -> dict[str, float]:
    window = [latency for at, latency, _ in reader.arrivals if since <= at <= until]
    return {"records": len(window), "p50_ms": percentile(window, 0.5), "p99_ms": percentile(window, 0.99),
            "max_ms": max(window)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backlog-mb", type=float, default=40)
    parser.add_argument("--quota", type=int, default=2_000_000, help="A's catch-up rate, bytes/s (its quotas)")
    parser.add_argument("--rate", type=int, default=200, help="B's feed, records/s")
    parser.add_argument("--seconds", type=float, default=20, help="the idle phase's length")
    parser.add_argument("--value-bytes", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args()
    backlog = int(args.backlog_mb * 1e6 / args.value_bytes)
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-neighbours-") as tmp:
        root = Path(tmp)
        stack = Stack(StackSpec(run_dir=root / "stack", components=("kafka",))).up()
        try:
            result = run(stack, root, args, backlog)
        finally:
            stack.down()
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return
    print(f"B's feed: {args.rate} records/s of {args.value_bytes} B; A's backlog {args.backlog_mb:g} MB "
          f"({backlog} records), A's quota {args.quota:,} bytes/s per broker (fetch on the source, produce on "
          "the target)")
    idle = result["idle"]["b"]
    for phase in ("idle", "unthrottled", "quota"):
        row = result[phase]
        a = (f"A caught up at {row['a_bytes_per_s'] / 1e6:6.2f} MB/s in {row['a_seconds']:5.1f} s"
             if "a_bytes_per_s" in row else "A idle")
        print(f"  {phase:<12} B p50 {row['b']['p50_ms']:7.1f} ms ({row['b']['p50_ms'] / idle['p50_ms']:4.1f}x idle)"
              f"  p99 {row['b']['p99_ms']:7.1f} ms ({row['b']['p99_ms'] / idle['p99_ms']:4.1f}x idle)"
              f"  over {row['b']['records']} records; {a}; cores: "
              + ", ".join(f"{side} {value:.2f}" for side, value in row["cores"].items()))


def run(stack: Stack, root: Path, args: argparse.Namespace, backlog: int) -> dict[str, Any]:
    source, target = stack.kafka[SOURCE], stack.kafka[TARGET]
    secrets, repo, out = root / "secrets", root / "repo", root / "out"
    stack.export_secret_store(secrets)
    create_topics(admin_client(source.admin_config()), [f"{t}.orders" for t in (A, B)], partitions=args.partitions)
    write_repo(stack, repo, args.partitions, a_quota=None)
    apply_and_generate(repo, out, secrets)
    flows = {t: flow_id(t, SOURCE, TARGET) for t in (A, B)}
    readers = {t: Reader(target.admin_config(), f"{SOURCE}.{t}.orders", args.partitions) for t in (A, B)}
    feed = Feed(source.admin_config(), f"{B}.orders", args.rate, args.value_bytes, args.partitions)
    result: dict[str, Any] = {}
    try:
        for reader in readers.values():
            reader.start()
        stack.start_mirrormaker(flows[B], out / "mm2" / f"{flows[B]}.properties", timeout=300)
        feed.start()
        readers[B].wait_for(1, 300)
        # what B's feed wrote while its MM2 started is a backlog: steady state once B is within 1 s of its feed
        readers[B].wait_for(feed.sent - args.rate, 300)
        time.sleep(args.seconds)  # B's MM2 warms up (JIT, first fetch sessions): measured first, idle's p99 was 1 s
        began, before = time.monotonic(), cpu_sample(stack, None)
        time.sleep(args.seconds)
        result["idle"] = {"b": b_latency(readers[B], began, time.monotonic()),
                          "cores": cores_busy(before, cpu_sample(stack, None))}
        for phase, quota in (("unthrottled", None), ("quota", args.quota)):
            write_repo(stack, repo, args.partitions, a_quota=quota)
            apply_and_generate(repo, out, secrets)
            fill(source.admin_config(), f"{A}.orders", backlog, args.value_bytes, args.partitions)
            expected = len(readers[A].arrivals) + backlog
            mm2 = stack.start_mirrormaker(flows[A], out / "mm2" / f"{flows[A]}.properties", timeout=300)
            readers[A].wait_for(expected - backlog + 1, 300)
            began, before = time.monotonic(), cpu_sample(stack, mm2.process.pid if mm2.process else None)
            readers[A].wait_for(expected, 1800)
            ended = time.monotonic()
            copied = sum(size for at, _, size in readers[A].arrivals if began <= at <= ended)
            result[phase] = {"b": b_latency(readers[B], began, ended),
                             "cores": cores_busy(before, cpu_sample(stack, mm2.process.pid if mm2.process else None)),
                             "a_seconds": ended - began, "a_bytes_per_s": copied / (ended - began)}
            stack.stop_mirrormaker(flows[A])
        feed.halt.set()
        feed.join(60)
        readers[B].wait_for(feed.sent, 120)  # every record of B's feed arrived
    finally:
        feed.halt.set()
        for flow in flows.values():
            if flow in stack.mirrormakers:
                stack.stop_mirrormaker(flow)
        for reader in readers.values():
            reader.halt.set()
            reader.join(30)
    result["b_records"] = {"sent": feed.sent, "arrived": len(readers[B].arrivals)}
    return result


if __name__ == "__main__":
    main()
