"""Benchmark: one flow's replication on the local stack, plain MirrorMaker 2 vs mm2gov at-least-once and exactly-once.

Starts the local stack's two Kafka clusters (SASL_SSL, SCRAM, StandardAuthorizer), applies and generates a
governance repo with one tenant flow per mm2gov variant (`mm2gov apply` and `mm2gov generate`, as a user runs
them), then runs three dedicated-mode MirrorMaker 2s on the same records, in the same run:

- plain: Kafka's defaults. The properties file holds only the clusters, their bootstrap servers and security
  (the stack's admin, a superuser), `source->target.enabled=true`, `source->target.topics=<topic>` and the
  replication factors of MM2's topics at -1 (the broker's default; Kafka's 2 and 3 cannot be created on the
  stack's one-node clusters); nothing tuned (one task, as mm2gov's flows);
- at_least_once: the tenant flow exactly as `mm2gov generate` writes it (`delivery: at_least_once`);
- exactly_once: the same with `delivery: exactly_once` (KIP-618 transactions on the target).

Each run uses fresh topics (`--partitions`, default 6): `--records` records of `--value-bytes` random bytes
(keys `b<run>-<n>`) are written to the source before MM2 starts (a backlog), MM2 is started and a consumer on
the target measures the time from the first to the last backlog record arriving: records/s and MB/s (of key +
value bytes). With MM2 caught up, a paced producer writes `--latency-rate` records/s for `--latency-seconds`;
the consumer takes each record's receive time minus its CreateTime (MM2 keeps the source timestamp): p50, p99,
max. Every consumer reads with isolation.level=read_committed (librdkafka's default; for exactly-once a record
is visible when MM2's transaction commits, which is the cost measured). Every run's target must hold exactly
the source's records: same count, same order-independent digest of every key and value.

Warm-up: one round of every variant on a third of the backlog and the whole paced feed (not counted: the
brokers' transaction path gets warm too, which a C2 JIT needs), then `--runs` rounds, the order
rotated each round so that no variant always goes first; each run is printed, then the median per variant, its
ratio to plain MM2, and the cores the machine spent during the throughput phase and during the paced feed (MM2,
the two brokers, this process, and everything else: other users of the machine skew the figures), with the share
of the paced feed's time some runnable task waited for a core (the kernel's pressure stall information): on a
machine with few cores, where a p99 comes from.
Target: at-least-once within 10% of plain MM2's throughput.

A/B of MM2 settings in the same run: `--tweak NAME:KEY=VALUE[,KEY=VALUE...]` adds a variant NAME, written
`<base>+<label>` (e.g. `exactly_once+nolinger:target.producer.linger.ms=0`): a flow of its own (its own
tenant, Connect group and internal topics), generated as the base variant's, its file with those keys set
(the file's keys as written, scoped: `target.producer.*`, `source.consumer.*`, `source->target.*`); it rotates
with the others and is reported like them.

`--jvm production` runs the brokers and MM2 as Kafka's start scripts do (1 GiB broker heaps, C2, G1) instead of
the stack's quick JVMs (small heaps, C1 only, serial GC: fast to start, about half the warm throughput).
`--broker KEY=VALUE` sets a server property of both brokers, for the whole run (an A/B across runs).

Usage: python bench/replication.py [--records 300000] [--value-bytes 512] [--partitions 6] [--runs 2]
       [--latency-rate 2000] [--latency-seconds 15] [--variants plain,at_least_once,exactly_once]
       [--tweak NAME:KEY=VALUE,...]... [--broker KEY=VALUE]... [--jvm stack|production] [--format json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

import javaproperties  # noqa: E402
import yaml  # noqa: E402
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition  # noqa: E402

from devstack.cpu import CpuSample, cores_busy, group_cpu_seconds, sample_cpu, waiting_share  # noqa: E402
from devstack.kafka import LOG4J2  # noqa: E402
from devstack.process import tail  # noqa: E402
from devstack.repo import tenant_document  # noqa: E402
from devstack.stack import CA_SECRET_NAME, Stack, StackSpec  # noqa: E402
from governance.kafka.admin import admin_client, create_topics  # noqa: E402
from governance.model.names import CA_CERT_KEY, PASSWORD_KEY, flow_id, remote_name  # noqa: E402

SOURCE, TARGET = "source", "target"
PLAIN = "plain"
VARIANTS = {PLAIN: None, "at_least_once": "at_least_once", "exactly_once": "exactly_once"}  # name -> delivery
TENANTS = {"at_least_once": "benchalo", "exactly_once": "bencheos"}
# Kafka's defaults are 2 (remote topics) and 3 (MM2's and Connect's own topics): the stack's brokers are single
# nodes, where those topics cannot be created and MM2's herders exit. -1 is the broker's default (1), as mm2gov's.
REPLICATION_FACTORS = ("replication.factor", "offset-syncs.topic.replication.factor",
                       "checkpoints.topic.replication.factor", "heartbeats.topic.replication.factor",
                       "offset.storage.replication.factor", "config.storage.replication.factor",
                       "status.storage.replication.factor")
TARGET_PCT = 10  # at-least-once's throughput within this many percent of plain MM2's


@dataclass(frozen=True)
class Jvm:
    broker: tuple[str, ...] | None  # None: the stack's own
    mm2: tuple[str, ...] | None


# What Kafka's start scripts give a JVM (kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS; the heaps of
# kafka-server-start.sh and connect-mirror-maker.sh): the stack's quick JIT starts fast but halves a warm copy.
KAFKA_SCRIPTS_JVM = ("-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
                     "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true")
JVMS = {"stack": Jvm(None, None),
        "production": Jvm(("-Xms1g", "-Xmx1g", *KAFKA_SCRIPTS_JVM), ("-Xms256m", "-Xmx2g", *KAFKA_SCRIPTS_JVM))}


# -- records -----------------------------------------------------------------------------------


@dataclass
class Records:
    """What was written to a source topic: count, key + value bytes, and an order-independent digest."""

    count: int = 0
    size: int = 0
    digest: int = 0

    def add(self, key: bytes, value: bytes) -> None:
        self.count += 1
        self.size += len(key) + len(value)
        self.digest = (self.digest + record_hash(key, value)) % 2**64


def record_hash(key: bytes, value: bytes) -> int:
    """A record's 64-bit hash; summed over a topic, a lost, doubled or altered record changes the sum."""
    return int.from_bytes(hashlib.blake2b(len(key).to_bytes(4, "big") + key + value, digest_size=8).digest(), "big")


def make_records(prefix: str, count: int, value_bytes: int, seed: int) -> list[tuple[bytes, bytes]]:
    rng = random.Random(seed)
    return [(f"{prefix}{i}".encode(), rng.randbytes(value_bytes)) for i in range(count)]


def new_producer(config: dict[str, Any], **settings: Any) -> Producer:
    return Producer({**config, "queue.buffering.max.messages": 500_000, **settings})


def produce_one(producer: Producer, topic: str, key: bytes, value: bytes, partition: int) -> None:
    while True:
        try:
            producer.produce(topic, key=key, value=value, partition=partition)
            return
        except BufferError:
            producer.poll(0.05)


def fill(config: dict[str, Any], topic: str, records: list[tuple[bytes, bytes]], partitions: int) -> Records:
    """The backlog, written before MM2 starts (batched for speed: MM2 reads it the same way whatever the batches)."""
    producer = new_producer(config, **{"linger.ms": 20, "batch.size": 1_000_000, "acks": "all"})
    written = Records()
    for i, (key, value) in enumerate(records):
        produce_one(producer, topic, key, value, i % partitions)
        written.add(key, value)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120) != 0:
        raise SystemExit(f"could not write the backlog to {topic}")
    return written


def paced(config: dict[str, Any], topic: str, records: list[tuple[bytes, bytes]], partitions: int,
          rate: int) -> Records:
    """Fresh records at `rate` per second (librdkafka's default linger), each stamped when produced."""
    producer = new_producer(config, **{"acks": "all"})
    written = Records()
    began = time.monotonic()
    for i, (key, value) in enumerate(records):
        due = began + i / rate
        if (wait := due - time.monotonic()) > 0:
            time.sleep(wait)
        produce_one(producer, topic, key, value, i % partitions)
        written.add(key, value)
        producer.poll(0)
    if producer.flush(60) != 0:
        raise SystemExit(f"could not write the paced records to {topic}")
    return written


# -- the target side ---------------------------------------------------------------------------


class TargetReader(threading.Thread):
    """Reads a remote topic from its first offset, read_committed, while MM2 fills it: when the first and the
    last backlog record arrived, each paced record's latency, and what it received (count, size, digest)."""

    def __init__(self, config: dict[str, Any], topic: str, partitions: int, backlog: int) -> None:
        super().__init__(daemon=True)
        self.config, self.topic, self.partitions, self.backlog = config, topic, partitions, backlog
        self.received = Records()
        self.backlog_seen = 0
        self.first: float | None = None  # monotonic time of the first backlog record's arrival
        self.last: float | None = None
        self.latencies_ms: list[float] = []
        self.error: str | None = None
        self.stopping = threading.Event()

    def run(self) -> None:
        consumer = Consumer({**self.config, "group.id": f"bench-{self.topic}", "enable.auto.commit": False,
                             "isolation.level": "read_committed", "fetch.max.bytes": 52_428_800})
        try:
            while not self.stopping.is_set():  # MM2 creates the remote topic: assign as soon as it is there
                meta = consumer.list_topics(self.topic, timeout=5).topics.get(self.topic)
                if meta is not None and meta.error is None and len(meta.partitions) == self.partitions:
                    break
                time.sleep(0.05)
            consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in range(self.partitions)])
            while not self.stopping.is_set():
                # what is fetched already, else block for the next record: consume(n, timeout) with a timeout
                # waits for n records or the timeout, which would add up to the timeout to every latency
                messages = consumer.consume(10_000, timeout=0) or [m for m in [consumer.poll(0.2)] if m]
                now, wall_ms = time.monotonic(), time.time() * 1000
                for message in messages:
                    if message.error():
                        self.error = str(message.error())
                        continue
                    key, value = message.key(), message.value()
                    self.received.add(key, value)
                    if key.startswith(b"b"):
                        self.backlog_seen += 1
                        self.first = self.first or now
                        if self.backlog_seen == self.backlog:
                            self.last = now
                    else:
                        self.latencies_ms.append(wall_ms - message.timestamp()[1])
        finally:
            consumer.close()

    def wait(self, done: Callable[[], bool], what: str, log: Path, stalled: float = 120) -> None:
        """Until `done()`; fail with MM2's log tail when no record arrived for `stalled` seconds."""
        seen, since = -1, time.monotonic()
        while not done():
            if self.received.count != seen:
                seen, since = self.received.count, time.monotonic()
            if time.monotonic() - since > stalled or not self.is_alive():
                raise SystemExit(f"no progress for {stalled:.0f} s waiting for {what} on {self.topic} ({seen} "
                                 f"records there; {self.error or 'no read error'}); MM2's log:\n{tail(log, 40)}")
            time.sleep(0.02)


# -- CPU ---------------------------------------------------------------------------------------


def cpu_sample(stack: Stack, mm2_pid: int | None) -> CpuSample:
    return sample_cpu({"mm2": group_cpu_seconds(mm2_pid) if mm2_pid else 0.0,
                       "brokers": sum(group_cpu_seconds(k.process.pid) for k in stack.kafka.values()),
                       "bench": sum(os.times()[:2])})


# -- variants ----------------------------------------------------------------------------------


def plain_properties(stack: Stack, secrets: Path, topic: str) -> str:
    """Kafka's defaults: clusters, bootstrap, security (the stack's admin, read from the secret store by
    DirectoryConfigProvider) and the one topic; nothing else."""
    props = {"clusters": f"{SOURCE},{TARGET}", "config.providers": "dir",
             "config.providers.dir.class": "org.apache.kafka.common.config.provider.DirectoryConfigProvider"}
    for alias in (SOURCE, TARGET):
        password = f"${{dir:{secrets}/{alias}-admin:{PASSWORD_KEY}}}"  # export_secret_store's layout
        props |= {
            f"{alias}.bootstrap.servers": stack.kafka[alias].bootstrap_servers,
            f"{alias}.security.protocol": "SASL_SSL",
            f"{alias}.sasl.mechanism": "SCRAM-SHA-512",
            f"{alias}.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
                                         f'username="admin" password="{password}";',
            f"{alias}.ssl.truststore.type": "PEM",
            f"{alias}.ssl.truststore.location": str(secrets / CA_SECRET_NAME / CA_CERT_KEY),
        }
    props |= {f"{SOURCE}->{TARGET}.enabled": "true", f"{SOURCE}->{TARGET}.topics": topic}
    return javaproperties.dumps(props | dict.fromkeys(REPLICATION_FACTORS, "-1"), timestamp=False)


def cli(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "governance", "--log-level", "warning", *args],
                          capture_output=True, text=True, cwd=REPO_ROOT)
    if done.returncode != 0:
        raise SystemExit(f"mm2gov {args[0]} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def governed_flows(stack: Stack, root: Path, secrets: Path, variants: list[str],
                   tweaks: dict[str, Tweak]) -> dict[str, Path]:
    """One tenant per mm2gov variant (a tweak's its own, so that nothing of its MM2 is shared), its flow's
    `delivery` set; `mm2gov apply` grants, `mm2gov generate` writes the MM2 files: the variant -> its
    generated properties file (a tweak's keys not yet set)."""
    repo, out = root / "repo", root / "out"
    (repo / "tenants").mkdir(parents=True)
    (repo / "clusters.yaml").write_text(stack.governance_clusters())
    governed = [v for v in variants if VARIANTS[base_of(v, tweaks)]]
    for variant in governed:
        name = tenant_of(variant, tweaks)
        tenant = tenant_document(name, SOURCE, TARGET)
        tenant["flows"][0]["delivery"] = VARIANTS[base_of(variant, tweaks)]
        (repo / "tenants" / f"{name}.yaml").write_text(yaml.safe_dump(tenant, sort_keys=False))
    if governed:
        cli("apply", str(repo), "--secrets-dir", str(secrets))
        cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    return {v: out / "mm2" / f"{flow_id(tenant_of(v, tweaks), SOURCE, TARGET)}.properties" for v in governed}


@dataclass(frozen=True)
class Tweak:
    """A variant that runs `base`'s properties file with `settings` set over it (--tweak)."""

    name: str
    base: str
    settings: dict[str, str]
    index: int  # its tenant's (and plain's topics') suffix: nothing shared with the base in the same round


def parse_tweak(text: str, index: int) -> Tweak:
    name, _, assignments = text.partition(":")
    base = name.partition("+")[0]
    if base not in VARIANTS or "+" not in name or not assignments:
        raise ValueError(f"--tweak {text!r}: expected <variant>+<label>:KEY=VALUE[,KEY=VALUE...] with a variant "
                         f"of {', '.join(VARIANTS)}")
    settings = dict(item.split("=", 1) for item in assignments.split(","))
    return Tweak(name, base, settings, index)


def base_of(variant: str, tweaks: dict[str, Tweak]) -> str:
    return tweaks[variant].base if variant in tweaks else variant


def tenant_of(variant: str, tweaks: dict[str, Tweak]) -> str:
    """A governed variant's tenant; a tweak's is its base's with the tweak's number."""
    tweak = tweaks.get(variant)
    return TENANTS[tweak.base] + str(tweak.index) if tweak else TENANTS[variant]


def tweaked_properties(base: Path, tweak: Tweak, root: Path) -> Path:
    """The base variant's file with the tweak's keys set over it."""
    props = javaproperties.loads(base.read_text())
    path = root / f"tweak{tweak.index}.properties"
    path.write_text(javaproperties.dumps(props | tweak.settings, timestamp=False))
    return path


def mm2_log4j(root: Path, levels: list[str]) -> Path:
    """The stack's MM2 logging with these loggers' levels (`LOGGER=LEVEL`)."""
    lines = [LOG4J2]
    for i, item in enumerate(levels):
        logger, _, level = item.partition("=")
        lines.append(f"logger.bench{i}.name = {logger}\nlogger.bench{i}.level = {level}\n")
    path = root / "mm2-log4j2.properties"
    path.write_text("".join(lines))
    return path


@dataclass
class Run:
    variant: str
    label: str
    records: int
    size: int
    seconds: float  # first to last backlog record on the target
    startup: float  # MM2 process start to the first record on the target
    latencies_ms: list[float] = field(default_factory=list, repr=False)
    cores: dict[str, float] = field(default_factory=dict)  # during the throughput phase
    paced_cores: dict[str, float] = field(default_factory=dict)  # during the paced feed
    paced_waiting: float | None = None  # waiting_share during the paced feed

    @property
    def rate(self) -> float:
        return self.records / self.seconds

    @property
    def mb_per_s(self) -> float:
        return self.size / self.seconds / 1e6


@dataclass
class Options:
    records: int
    value_bytes: int
    partitions: int
    latency_rate: int
    latency_seconds: float
    jvm: str = "stack"  # JVMS' key: the brokers' and MM2's JVM options


def run_once(stack: Stack, variant: str, label: str, seed: int, opts: Options, backlog_records: int,
             secrets: Path, generated: dict[str, Path], root: Path, tweaks: dict[str, Tweak],
             keep_logs: Path | None = None, log4j_config: Path | None = None) -> Run:
    """One MM2 run on fresh topics: backlog, throughput, (latency), every record checked on the target.
    A tweak's run is its base variant's with the tweak's keys set over its own flow's file."""
    source, target = stack.kafka[SOURCE], stack.kafka[TARGET]
    tweak = tweaks.get(variant)
    if base_of(variant, tweaks) == PLAIN:
        topic = f"bench-plain-{label}" + (f"-t{tweak.index}" if tweak else "")
    else:
        topic = f"{tenant_of(variant, tweaks)}.{label}"
    remote = remote_name("default", SOURCE, topic)
    create_topics(admin_client(source.admin_config()), [topic], partitions=opts.partitions)
    backlog = make_records(f"b{label}-", backlog_records, opts.value_bytes, seed)
    written = fill(source.admin_config(), topic, backlog, opts.partitions)
    if base_of(variant, tweaks) == PLAIN:
        properties = root / f"plain-{label}.properties"
        properties.write_text(plain_properties(stack, secrets, topic))
    else:
        properties = generated[variant]
    if tweak:
        properties = tweaked_properties(properties, tweak, root)
    name = f"{base_of(variant, tweaks)}-{label}" + (f"-t{tweak.index}" if tweak else "")
    reader = TargetReader(target.admin_config(), remote, opts.partitions, backlog_records)
    reader.start()
    started = time.monotonic()
    try:
        mm2 = stack.start_mirrormaker(name, properties, log4j_config=log4j_config, jvm_options=JVMS[opts.jvm].mm2)
        before = cpu_sample(stack, mm2.process.pid if mm2.process else None)
        reader.wait(lambda: reader.last is not None, "the backlog", mm2.log_path)
        cores = cores_busy(before, cpu_sample(stack, mm2.process.pid if mm2.process else None))
        fresh = make_records(f"l{label}-", int(opts.latency_rate * opts.latency_seconds), opts.value_bytes, seed + 1)
        before = cpu_sample(stack, mm2.process.pid if mm2.process else None)
        sent = paced(source.admin_config(), topic, fresh, opts.partitions, opts.latency_rate)
        reader.wait(lambda: len(reader.latencies_ms) >= sent.count, "the paced records", mm2.log_path)
        after = cpu_sample(stack, mm2.process.pid if mm2.process else None)
        paced_cores, paced_waiting = cores_busy(before, after), waiting_share(before, after)
        latencies = list(reader.latencies_ms)
        written = Records(written.count + sent.count, written.size + sent.size, (written.digest + sent.digest) % 2**64)
        time.sleep(1)  # anything MM2 would still copy (a duplicate) arrives and is counted
    finally:
        if name in stack.mirrormakers:
            log = stack.mirrormakers[name].log_path
            stack.stop_mirrormaker(name)
            if keep_logs:
                shutil.copyfile(log, keep_logs / f"{name}.log")
        reader.stopping.set()
        reader.join(30)
    got = reader.received
    if (got.count, got.digest) != (written.count, written.digest) or reader.error:
        raise SystemExit(f"{variant} run {label}: the target holds {got.count} records (digest {got.digest:016x}), "
                         f"the source {written.count} ({written.digest:016x}); {reader.error or 'no read error'}")
    for cluster, name in ((source, topic), (target, remote)):  # keep the brokers' disks and caches small
        admin = admin_client(cluster.admin_config())
        admin.delete_topics([name])[name].result(60)
    assert reader.first is not None and reader.last is not None
    return Run(variant, label, backlog_records, sum(len(k) + len(v) for k, v in backlog),
               reader.last - reader.first, reader.first - started, latencies, cores, paced_cores, paced_waiting)


# -- report ------------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def summary(runs: list[Run], variants: list[str]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for variant in variants:
        mine = [r for r in runs if r.variant == variant]
        latencies = [ms for r in mine for ms in r.latencies_ms]
        cores = {side: statistics.median(r.cores[side] for r in mine) for side in mine[0].cores}
        paced_cores = {side: statistics.median(r.paced_cores[side] for r in mine) for side in mine[0].paced_cores}
        waiting = [r.paced_waiting for r in mine if r.paced_waiting is not None]
        table[variant] = {
            "records_per_s": statistics.median(r.rate for r in mine),
            "mb_per_s": statistics.median(r.mb_per_s for r in mine),
            "startup_s": statistics.median(r.startup for r in mine),
            "latency_ms": {"p50": percentile(latencies, 0.50), "p99": percentile(latencies, 0.99),
                           "max": max(latencies), "records": len(latencies)},
            "cores_busy": cores,
            "paced_cores_busy": paced_cores,
            "paced_waiting_for_a_core": statistics.median(waiting) if waiting else None,
        }
    if PLAIN in table:
        for row in table.values():
            row["throughput_vs_plain"] = row["records_per_s"] / table[PLAIN]["records_per_s"]
            row["p50_vs_plain"] = row["latency_ms"]["p50"] / table[PLAIN]["latency_ms"]["p50"]
            row["p99_vs_plain"] = row["latency_ms"]["p99"] / table[PLAIN]["latency_ms"]["p99"]
    return table


def exactly_once_cost(table: dict[str, Any]) -> str | None:
    """What exactly-once (and each of its tweaks) costs in this run, against plain MM2 and at-least-once."""
    if "at_least_once" not in table:
        return None
    alo = table["at_least_once"]
    lines = []
    for name, eos in table.items():
        if name.partition("+")[0] != "exactly_once":
            continue
        p99_ratio = eos["latency_ms"]["p99"] / alo["latency_ms"]["p99"]
        lines.append(
            f"{name}'s cost: {eos['records_per_s'] / alo['records_per_s']:.0%} of at-least-once's throughput"
            + (f" ({eos['throughput_vs_plain']:.0%} of plain's)" if "throughput_vs_plain" in eos else "")
            + f", latency p50 {eos['latency_ms']['p50'] - alo['latency_ms']['p50']:+.1f} ms, "
            f"p99 {eos['latency_ms']['p99'] - alo['latency_ms']['p99']:+.1f} ms ({p99_ratio:.2f}x) against "
            "at-least-once (records visible at MM2's transaction commit)")
    return "\n".join(lines) or None


def verdict(table: dict[str, Any]) -> str:
    if PLAIN not in table or "at_least_once" not in table:
        return "target not evaluated: needs both plain and at_least_once"
    ratio = table["at_least_once"]["throughput_vs_plain"]
    met = ratio >= 1 - TARGET_PCT / 100
    return (f"target: at-least-once within {TARGET_PCT}% of plain MM2's throughput -> {ratio:.0%} of plain in "
            f"this run ({'met' if met else 'MISSED'})")


def paced_load(cores: dict[str, float], waiting: float | None) -> str:
    """How busy the machine was while the paced records were timed: where a p99 comes from on few cores."""
    sides = ", ".join(f"{side} {value:.2f}" for side, value in cores.items())
    return (f"cores busy {sum(cores.values()):.2f} ({sides})"
            + (f", some task waiting for a core {waiting:.0%} of the time" if waiting is not None else ""))


def print_text(runs: list[Run], table: dict[str, Any], opts: Options) -> None:
    print(f"\nruns ({opts.records} records of {opts.value_bytes} B, {opts.partitions} partitions; latency: "
          f"{opts.latency_rate} records/s for {opts.latency_seconds:g} s; the {opts.jvm} JVM options):")
    for r in runs:
        busy = ", ".join(f"{side} {value:.2f}" for side, value in r.cores.items())
        lat = (f"p50 {percentile(r.latencies_ms, .5):7.1f} p99 {percentile(r.latencies_ms, .99):7.1f} ms"
               if r.latencies_ms else "(no latency phase)")
        print(f"  {r.variant:<14} {r.label:<4} {r.seconds:6.2f} s {r.rate:>9,.0f} records/s {r.mb_per_s:6.1f} MB/s"
              f"  startup {r.startup:5.1f} s  {lat}  cores: {busy}")
        print(f"  {'':<19} paced feed: {paced_load(r.paced_cores, r.paced_waiting)}")
    print(f"\nmedian of {len([r for r in runs if r.variant == runs[0].variant])} runs per variant "
          "(latency over all of a variant's paced records):")
    print(f"  {'variant':<14} {'records/s':>10} {'MB/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} "
          f"{'thr/plain':>9} {'p50/plain':>9} {'p99/plain':>9}  cores busy in the throughput phase")
    for variant, row in table.items():
        lat = row["latency_ms"]
        busy = ", ".join(f"{side} {value:.2f}" for side, value in row["cores_busy"].items())
        ratios = (f"{row['throughput_vs_plain']:>9.2f} {row['p50_vs_plain']:>9.2f} {row['p99_vs_plain']:>9.2f}"
                  if "throughput_vs_plain" in row else f"{'-':>9} {'-':>9} {'-':>9}")
        print(f"  {variant:<14} {row['records_per_s']:>10,.0f} {row['mb_per_s']:>7.1f} {lat['p50']:>8.1f} "
              f"{lat['p99']:>8.1f} {lat['max']:>8.1f} {ratios}  {busy}")
    print("while the paced records were timed (median of the runs):")
    for variant, row in table.items():
        print(f"  {variant:<14} {paced_load(row['paced_cores_busy'], row['paced_waiting_for_a_core'])}")
    other = max(row["cores_busy"]["other"] for row in table.values())
    print(f"  (the machine has {os.cpu_count()} cores; other = every process outside this bench's stack"
          + (f": up to {other:.2f} cores here, so the figures are skewed by them" if other >= 0.25 else "") + ")")
    if cost := exactly_once_cost(table):
        print(cost)
    print(verdict(table))


def run_json(run: Run) -> dict[str, Any]:
    return {"variant": run.variant, "label": run.label, "records": run.records, "bytes": run.size,
            "seconds": run.seconds, "startup_s": run.startup, "records_per_s": run.rate, "mb_per_s": run.mb_per_s,
            "latency_ms": {"p50": percentile(run.latencies_ms, .5), "p99": percentile(run.latencies_ms, .99),
                           "max": max(run.latencies_ms), "records": len(run.latencies_ms)},
            "cores_busy": run.cores, "paced_cores_busy": run.paced_cores,
            "paced_waiting_for_a_core": run.paced_waiting}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300_000, help="backlog records per run")
    parser.add_argument("--value-bytes", type=int, default=512)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--runs", type=int, default=2, help="timed runs per variant (after one warm-up each)")
    parser.add_argument("--latency-rate", type=int, default=2000, help="paced records per second")
    parser.add_argument("--latency-seconds", type=float, default=15)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--tweak", action="append", default=[], metavar="NAME:KEY=VALUE,...",
                        help="an extra variant <base>+<label>: the base variant's file with these keys set")
    parser.add_argument("--jvm", choices=sorted(JVMS), default="stack",
                        help="the brokers' and MM2's JVM options: the stack's (small heaps, quick JIT: C1 only, "
                             "serial GC) or production (as Kafka's start scripts run them: 1 GiB heaps, C2, G1)")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument("--keep-logs", type=Path, help="copy each run's MirrorMaker 2 log into this directory")
    parser.add_argument("--broker", action="append", default=[], metavar="KEY=VALUE",
                        help="a server property of both brokers (e.g. add.partitions.to.txn.retry.backoff.ms=2: "
                             "bench/transactions.py says why); printed with the results")
    parser.add_argument("--mm2-log", action="append", default=[], metavar="LOGGER=LEVEL",
                        help="a MirrorMaker 2 logger's level (e.g. org.apache.kafka.connect.runtime."
                             "ExactlyOnceWorkerSourceTask=DEBUG: each commit's duration), with --keep-logs")
    args = parser.parse_args()
    variants = args.variants.split(",")
    if unknown := set(variants) - set(VARIANTS):
        parser.error(f"unknown variant(s): {', '.join(sorted(unknown))}")
    try:
        tweaks = {t.name: t for t in (parse_tweak(text, i) for i, text in enumerate(args.tweak, 1))}
    except ValueError as error:
        parser.error(str(error))
    if missing := {t.base for t in tweaks.values()} - set(variants):
        parser.error(f"--tweak needs its base variant(s) in --variants: {', '.join(sorted(missing))}")
    variants += list(tweaks)
    if bad := [kv for kv in args.broker if "=" not in kv]:
        parser.error(f"--broker takes KEY=VALUE, not {bad[0]!r}")
    brokers = dict(kv.split("=", 1) for kv in args.broker)
    if args.keep_logs:
        args.keep_logs.mkdir(parents=True, exist_ok=True)
    opts = Options(args.records, args.value_bytes, args.partitions, args.latency_rate, args.latency_seconds, args.jvm)
    text = args.format == "text"
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-replication-") as tmp:
        root = Path(tmp)
        stack = Stack(StackSpec(run_dir=root / "stack", components=("kafka",), kafka_properties=brokers,
                                kafka_jvm_options=JVMS[opts.jvm].broker)).up()
        try:
            secrets = root / "secrets"
            stack.export_secret_store(secrets)
            generated = governed_flows(stack, root, secrets, variants, tweaks)
            log4j_config = mm2_log4j(root, args.mm2_log) if args.mm2_log else None
            for round_ in range(args.runs + 1):
                order = variants[round_ % len(variants):] + variants[:round_ % len(variants)]
                for variant in order:
                    warm = round_ == 0
                    label = "w" if warm else f"r{round_}"
                    run = run_once(stack, variant, label, seed=round_ * 1000, opts=opts,
                                   backlog_records=max(1, args.records // 3) if warm else args.records,
                                   secrets=secrets, generated=generated, root=root, tweaks=tweaks,
                                   keep_logs=args.keep_logs, log4j_config=log4j_config)
                    if text:
                        print(f"{'warm-up' if warm else 'run ' + str(round_)}: {variant:<14} {run.rate:>9,.0f} "
                              f"records/s", flush=True)
                    if not warm:
                        runs.append(run)
        finally:
            stack.down()
    table = summary(runs, variants)
    if text:
        print_text(runs, table, opts)
        if brokers:
            print("brokers' server properties set by --broker: " + ", ".join(f"{k}={v}" for k, v in brokers.items()))
    else:
        print(json.dumps({"options": asdict(opts), "brokers": brokers, "cores": os.cpu_count(),
                          "runs": [run_json(r) for r in runs],
                          "variants": table, "exactly_once_cost": exactly_once_cost(table),
                          "verdict": verdict(table)}, indent=2))


if __name__ == "__main__":
    main()
