"""Benchmark: cutting over from a legacy shared MirrorMaker 2 to mm2gov flows, `migrate` vs a naive cut-over.

On the local stack's two Kafka clusters, a legacy shared MM2 (Kafka 3.9.2's, dedicated mode, one process,
the stack's admin) replicates two tenants' topics: `migr` and `naive`, each `--partitions` partitions, while
a paced producer writes `--rate` records/s to each. Both tenants then move to their mm2gov flows (generated
by `mm2gov generate`, `mm2gov apply` for their ACLs; at_least_once: the arrival stamps are indexed by target
offset, which an exactly-once flow's transaction markers would shift; tests/integration/test_migrate.py runs
the exactly-once cut-over), in the same run:

1. the legacy MM2 is stopped gracefully (the paced producer keeps writing);
2. `--backlog` records (default 1,000,000) are written to each tenant's topic as fast as the producer goes:
   what accumulates on the source while nothing replicates (a long outage, compressed);
3. `mm2gov migrate --apply` seeds `migr`'s flow (a repo holding only that tenant); `naive`'s flow gets
   nothing, so its MM2 starts from the earliest offsets, as a cut-over without mm2gov would;
4. both flows' MM2s start at once; the paced producer stops when both caught up.

A consumer on the target stamps every record's arrival. Printed per tenant:
- downtime: last record the legacy MM2 replicated -> first record the flow replicated that the target did
  not have yet, minus the backlog-writing interval of step 2 (the benchmark's own pause, not the cut-over's);
  naive's also minus `migrate --apply`, which it skips; its parts: the legacy's stop, `migrate --apply` (migr
  only), the flow MM2's start to its first new record;
- catch-up: flows started -> the last record the source held when they started is on the target;
- duplicates: records on the target beyond the source's (0 for migr; the legacy's whole copy for naive);
and the check that migr's target holds every source record exactly once (count and an order-independent
digest per partition).

Usage: python bench/migration.py [--backlog 1000000] [--legacy-records 100000] [--rate 1000] [--partitions 6]
       [--value-bytes 100] [--format json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

import javaproperties  # noqa: E402
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition  # noqa: E402

from devstack.repo import write_stack_repo  # noqa: E402
from devstack.stack import Stack, StackSpec  # noqa: E402
from governance.kafka.admin import admin_client, create_topics  # noqa: E402
from governance.model.names import flow_id, remote_name  # noqa: E402

SOURCE, TARGET = "source", "target"
TENANTS = ("migr", "naive")
# bench pace: the flows' MM2 find their topics and commit offsets sooner than Kafka's defaults
QUIET = {"log_level": 2}  # short-lived consumers: no librdkafka errors about connections closed under them
PACE = {"refresh.topics.interval.seconds": "5", "refresh.groups.interval.seconds": "5",
        "emit.checkpoints.interval.seconds": "5"}


@dataclass(frozen=True)
class Options:
    backlog: int
    legacy_records: int
    rate: int
    partitions: int
    value_bytes: int


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "governance", *args], capture_output=True, text=True,
                          cwd=REPO_ROOT, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"mm2gov {args[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done


def value(tenant: str, i: int, size: int) -> bytes:
    return f"{tenant}-{i:09d}-".encode().ljust(size, b"x")


def digest(values: list[bytes]) -> int:
    return sum(int.from_bytes(hashlib.blake2b(v, digest_size=8).digest(), "big") for v in values) % 2**64


class Feeder(threading.Thread):
    """`rate` records/s to each tenant's topic, sequence-numbered, round-robin over the partitions, until halted."""

    def __init__(self, config: dict[str, Any], topics: dict[str, str], opts: Options, start: int = 0) -> None:
        super().__init__(daemon=True)
        self.config, self.topics, self.opts = config, topics, opts
        self.next = start
        self.halt = threading.Event()
        self.lock = threading.Lock()  # the backlog writer takes sequence numbers from the same counter

    def take(self, n: int) -> range:
        with self.lock:
            taken = range(self.next, self.next + n)
            self.next += n
            return taken

    def run(self) -> None:
        producer = Producer({**self.config, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
        step = max(1, self.opts.rate // 20)
        while not self.halt.is_set():
            began = time.monotonic()
            write(producer, self.topics, self.take(step), self.opts)
            producer.poll(0)
            time.sleep(max(0.0, step / self.opts.rate - (time.monotonic() - began)))
        if producer.flush(60) != 0:
            raise SystemExit("paced records left unsent")


def write(producer: Producer, topics: dict[str, str], sequence: range, opts: Options) -> None:
    for tenant, topic in topics.items():
        for i in sequence:
            while True:
                try:
                    producer.produce(topic, value=value(tenant, i, opts.value_bytes), partition=i % opts.partitions)
                    break
                except BufferError:
                    producer.poll(0.05)


class Watcher(threading.Thread):
    """Stamps every record's arrival on the target's remote topics (monotonic seconds, by partition and offset)."""

    def __init__(self, config: dict[str, Any], topics: list[str], partitions: int) -> None:
        super().__init__(daemon=True)
        self.config, self.topics, self.partitions = config, topics, partitions
        self.arrivals = {(t, p): array("d") for t in topics for p in range(partitions)}
        self.offsets = {(t, p): array("q") for t in topics for p in range(partitions)}
        self.halt = threading.Event()

    def run(self) -> None:
        consumer = Consumer({**self.config, "group.id": "bench-migration", "enable.auto.commit": False,
                             "isolation.level": "read_committed", "fetch.max.bytes": 52_428_800,
                             "topic.metadata.refresh.interval.ms": 1000})
        try:
            while not self.halt.is_set():
                topics = consumer.list_topics(timeout=5).topics
                if all(t in topics and len(topics[t].partitions) == self.partitions for t in self.topics):
                    break
                time.sleep(0.1)
            consumer.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t in self.topics
                             for p in range(self.partitions)])
            while not self.halt.is_set():
                messages = consumer.consume(10_000, timeout=0) or [m for m in [consumer.poll(0.1)] if m]
                now = time.monotonic()
                for message in messages:
                    if message.error() is None:
                        key = (message.topic(), message.partition())
                        self.arrivals[key].append(now)
                        self.offsets[key].append(message.offset())
        finally:
            consumer.close()

    def count(self, topic: str) -> int:
        return sum(len(self.offsets[(topic, p)]) for p in range(self.partitions))


def ends(config: dict[str, Any], topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({**config, "group.id": "bench-migration-ends", **QUIET})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30, cached=False)[1]
                for p in range(partitions)}
    finally:
        consumer.close()


def read_values(config: dict[str, Any], topic: str, partitions: int) -> dict[int, list[bytes]]:
    consumer = Consumer({**config, "group.id": "bench-migration-check", "enable.auto.commit": False,
                         "isolation.level": "read_committed", "enable.partition.eof": True})
    found: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        pending = set(range(partitions))
        while pending:
            for message in consumer.consume(10_000, timeout=1.0):
                if message.error() is None:
                    found[message.partition()].append(message.value())
                elif message.error().code() == -191:  # _PARTITION_EOF
                    pending.discard(message.partition())
    finally:
        consumer.close()
    return found


def wait(what: str, done, timeout: float = 1800) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.2)


def run(stack: Stack, root: Path, opts: Options) -> dict[str, Any]:
    source, target = stack.kafka[SOURCE].admin_config(), stack.kafka[TARGET].admin_config()
    repo, migr_repo, secrets, out = root / "repo", root / "migr-repo", root / "secrets", root / "out"
    write_stack_repo(stack, repo, TENANTS)
    shutil.copytree(repo, migr_repo)
    (migr_repo / "tenants" / "naive.yaml").unlink()  # migrate seeds only migr's flow
    stack.export_secret_store(secrets)
    topics = {tenant: f"{tenant}.events" for tenant in TENANTS}
    remotes = {tenant: remote_name("default", SOURCE, topic) for tenant, topic in topics.items()}
    create_topics(admin_client(source), topics.values(), partitions=opts.partitions)
    cli("apply", str(repo), "--secrets-dir", str(secrets))
    cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    flows = {tenant: flow_id(tenant, SOURCE, TARGET) for tenant in TENANTS}
    properties = {}
    for tenant, flow in flows.items():
        properties[tenant] = root / f"{flow}.properties"
        generated = javaproperties.loads((out / "mm2" / f"{flow}.properties").read_text())
        properties[tenant].write_text(javaproperties.dumps(generated | PACE, timestamp=False))
    legacy = stack.write_mm2_properties("legacy", ",".join(f"{t}[.].*" for t in TENANTS))

    watcher = Watcher(target, list(remotes.values()), opts.partitions)
    watcher.start()
    feeder = Feeder(source, topics, opts)
    producer = Producer({**source, "acks": "all", "linger.ms": 50, "batch.size": 1_000_000,
                         "queue.buffering.max.messages": 1_000_000})
    write(producer, topics, feeder.take(opts.legacy_records), opts)
    producer.flush(300)
    stack.start_mirrormaker("legacy", legacy, kafka_version="3")
    feeder.start()
    wait("the legacy MM2 caught up", lambda: all(watcher.count(r) >= opts.legacy_records for r in remotes.values()))
    time.sleep(5)  # the legacy MM2 replicating the paced records
    stop_began = time.monotonic()
    stack.stop_mirrormaker("legacy")
    stopped = time.monotonic()
    legacy_end = {t: ends(target, r, opts.partitions) for t, r in remotes.items()}
    backlog_began = time.monotonic()
    write(producer, topics, feeder.take(opts.backlog), opts)
    if producer.flush(600) != 0:
        raise SystemExit("backlog left unsent")
    go = time.monotonic()
    migrate_began = time.monotonic()
    cli("migrate", "--legacy", str(legacy), "--pair", f"{SOURCE}->{TARGET}", "--repo", str(migr_repo),
        "--secrets-dir", str(secrets), "--apply")
    migrated = time.monotonic()
    starts = {}
    threads = [threading.Thread(target=lambda t=t: starts.__setitem__(t, start(stack, flows[t], properties[t])))
               for t in TENANTS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    at_go = {t: ends(source, topic, opts.partitions) for t, topic in topics.items()}
    # migr's flow copies source offset o to target offset o; naive's re-copies from 0 behind the legacy's copy
    caught_up_at = {t: {p: (0 if t == "migr" else legacy_end[t][p]) + at_go[t][p] for p in range(opts.partitions)}
                    for t in TENANTS}
    for tenant in TENANTS:
        wait(f"{tenant} caught up", lambda t=tenant: all(len(watcher.offsets[(remotes[t], p)]) and
                                                         watcher.offsets[(remotes[t], p)][-1] + 1 >= caught_up_at[t][p]
                                                         for p in range(opts.partitions)))
    feeder.halt.set()
    feeder.join(120)
    final = {t: ends(source, topic, opts.partitions) for t, topic in topics.items()}
    wait("the last paced records", lambda: all(
        watcher.count(remotes[t]) >= sum(final[t].values()) + (sum(legacy_end[t].values()) if t == "naive" else 0)
        for t in TENANTS), 600)
    for tenant in TENANTS:
        stack.stop_mirrormaker(flows[tenant])
    watcher.halt.set()
    watcher.join(60)
    pause = go - backlog_began
    result: dict[str, Any] = {"legacy_stop_s": round(stopped - stop_began, 2), "backlog_write_s": round(pause, 2),
                              "migrate_apply_s": round(migrated - migrate_began, 2), "tenants": {}}
    for tenant in TENANTS:
        remote = remotes[tenant]
        last_legacy = max(watcher.arrivals[(remote, p)][legacy_end[tenant][p] - 1]
                          for p in range(opts.partitions) if legacy_end[tenant][p])
        # the first record the flow wrote that the target lacked: migr's first write; naive's first re-copy
        # beyond what the legacy had copied (target offset legacy_end + legacy_end)
        first_new = min(watcher.arrivals[(remote, p)][(2 if tenant == "naive" else 1) * legacy_end[tenant][p]]
                        for p in range(opts.partitions))
        first_any = min(watcher.arrivals[(remote, p)][legacy_end[tenant][p]] for p in range(opts.partitions))
        caught = max(watcher.arrivals[(remote, p)][caught_up_at[tenant][p] - 1] for p in range(opts.partitions))
        on_target = read_values(target, remote, opts.partitions)
        on_source = read_values(source, topics[tenant], opts.partitions)
        copied = sum(len(v) for v in on_target.values())
        result["tenants"][tenant] = {
            "downtime_s": round(first_new - last_legacy - pause - (0 if tenant == "migr" else migrated - go), 2),
            "mm2_start_s": round(starts[tenant], 2),
            "flow_start_to_first_new_s": round(first_new - migrated, 2),
            "flow_start_to_first_record_s": round(first_any - migrated, 2),
            "catch_up_s": round(caught - migrated, 2),
            "backlog_records": opts.backlog,
            "records_to_copy": sum(caught_up_at[tenant].values()) - sum(legacy_end[tenant].values()),
            "source_records": sum(len(v) for v in on_source.values()),
            "target_records": copied,
            "duplicates": copied - sum(len(v) for v in on_source.values()),
            "exact": all(digest(on_target[p]) == digest(on_source[p]) and len(on_target[p]) == len(on_source[p])
                         for p in range(opts.partitions)),
        }
    return result


def start(stack: Stack, flow: str, properties: Path) -> float:
    began = time.monotonic()
    stack.start_mirrormaker(flow, properties)
    return time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backlog", type=int, default=1_000_000, help="records per tenant written while no MM2 runs")
    parser.add_argument("--legacy-records", type=int, default=100_000,
                        help="records per tenant the legacy copies first")
    parser.add_argument("--rate", type=int, default=1000, help="paced records per second per tenant")
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--format", choices=["text", "json"], default="text")
    args = parser.parse_args()
    opts = Options(args.backlog, args.legacy_records, args.rate, args.partitions, args.value_bytes)
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-migration-") as tmp:
        root = Path(tmp)
        stack = Stack(StackSpec(run_dir=root / "stack", components=("kafka",))).up()
        try:
            result = run(stack, root, opts)
        finally:
            stack.down()
    result = {"options": asdict(opts), "cores": os.cpu_count(), **result}
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return
    print(f"cut-over of 2 tenants from a legacy shared MM2 (Kafka 3.9.2) to mm2gov flows "
          f"(at_least_once); backlog {opts.backlog:,} records per tenant, {opts.rate:,} records/s paced, "
          f"{os.cpu_count()} cores")
    print(f"legacy MM2 stop {result['legacy_stop_s']} s; migrate --apply {result['migrate_apply_s']} s; "
          f"backlog writing (not counted) {result['backlog_write_s']} s")
    print(f"{'':<7}{'downtime s':>11}{'MM2 start s':>12}{'to 1st new s':>13}{'catch-up s':>11}{'copied':>11}"
          f"{'duplicates':>11}  exact")
    for tenant, row in result["tenants"].items():
        print(f"{tenant:<7}{row['downtime_s']:>11}{row['mm2_start_s']:>12}{row['flow_start_to_first_new_s']:>13}"
              f"{row['catch_up_s']:>11}{row['records_to_copy']:>11,}{row['duplicates']:>11,}  {row['exact']}")


if __name__ == "__main__":
    main()
