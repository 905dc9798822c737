"""Benchmark: the audit's record scan (Spark's Kafka source), against a plain consumer and across Spark masters.

Starts one real Kafka broker (the local stack's, SASL_SSL + SCRAM), writes a topic of `--records`
records over 4 partitions with a tenant-marker header, then, in the same run:

- reference: reads the whole topic with a confluent-kafka Consumer (the reference) and with
  `spark_audit.records.read_records` on local[2] (hash + marker per record, as the audit does; Spark
  session start not counted), alternately, `--runs` times each. Prints the best records/s of each
  (and every run's time) and the ratio. Target: the Spark scan reaches at least 50% of the plain
  consumer's rate.
- cluster: the same scan on local[2], on a Spark standalone cluster with one worker and on one with
  two workers (one core each, every daemon and executor its own JVM, started from pyspark's own
  distribution on loopback: `devstack/spark_cluster.py`), `--runs` times each after a
  warm-up scan. Every scan's answer (records, marked records, an XOR of the per-record hashes)
  must be the same in every mode. Prints the best records/s of each, the 2-worker/1-worker ratio,
  the cores each side kept busy during the best run (executors, the broker, the driver, and every
  other process on the machine; read from /proc) and, from those figures, where the scan stops
  scaling on this machine's cores.
- partitions: many small partitions (`--small-topics` topics of one partition, 5 records each), the
  shape of a real estate's many quiet topics: the audit's scan (SCAN_FETCH_OPTIONS) against the same
  scan with the Kafka consumer's default fetch wait (500 ms), alternately, `--runs` times each on a warm
  local[2]; the answers must be equal. Prints the best time of each and the time per partition.
- variants (not in `all`): where the scan's time goes. The plain consumer and, alternately, the audit's
  scan before issue 26 (Kafka through Spark's V1 relation, SHA-256 over a concatenated copy, the marker
  by a filter() lambda), the Kafka source's rows alone (V1 and V2), the rows plus each column alone
  (either hash, either marker), the audit's scan as it is, and the audit's scan with other reader options
  (minPartitions, the socket receive buffer, fetch sizes), on a warm local[2], `--runs` times each after
  a warm-up: best records/s of each and its ratio to the plain consumer of the same run; the answers of
  the audit's variants must be equal.

Usage: python bench/audit_scan.py [--mode all|reference|cluster|partitions|variants] [--records 1000000]
       [--value-bytes 512] [--runs 3] [--small-topics 60]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the repo, not bench/ (bench/secrets.py: stdlib name)

from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from pyspark import SparkContext  # noqa: E402
from pyspark.sql import Column, DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from devstack import tools  # noqa: E402
from devstack.cpu import group_cpu_seconds, machine_busy_seconds, process_cpu_seconds  # noqa: E402
from devstack.spark_cluster import SparkStandalone  # noqa: E402
from devstack.stack import Stack, StackSpec  # noqa: E402
from governance.kafka.admin import admin_client, create_topics  # noqa: E402
from spark_audit import records as scan_options  # noqa: E402
from spark_audit.records import (  # noqa: E402
    kafka_frame,
    offset_window,
    read_records,
    record_hash,
    record_marker,
    record_rows,
)
from spark_audit.run import SETTINGS, V1_SOURCES, spark_session  # noqa: E402

TOPIC, PARTITIONS = "bench.scan", 4


def fill(config: dict, records: int, value_bytes: int) -> None:
    producer = Producer({**config, "linger.ms": 20, "batch.size": 1_000_000, "compression.type": "lz4",
                         "acks": "1", "queue.buffering.max.messages": 500_000})
    value = b"x" * value_bytes
    for i in range(records):
        while True:
            try:
                producer.produce(TOPIC, key=str(i).encode(), value=value, partition=i % PARTITIONS,
                                 headers=[("lob", b"bench")])
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0


def consume_all(config: dict, window: dict) -> tuple[int, float]:
    consumer = Consumer({**config, "group.id": "bench-scan", "enable.auto.commit": False,
                         "fetch.max.bytes": 52_428_800, "max.partition.fetch.bytes": 10_485_760})
    parts = window[TOPIC]
    consumer.assign([TopicPartition(TOPIC, p, start) for p, (start, _) in parts.items()])
    remaining = {p: end for p, (_, end) in parts.items()}
    count = 0
    began = time.perf_counter()
    while remaining:
        for message in consumer.consume(10_000, timeout=1.0):
            if message.error():
                continue
            count += 1
            if message.offset() + 1 >= remaining.get(message.partition(), 0):
                remaining.pop(message.partition(), None)
    seconds = time.perf_counter() - began
    consumer.close()
    return count, seconds


def spark_scan(spark: SparkSession, config: dict, window: dict) -> tuple[int, int, int]:
    """The audit's scan, aggregated so that every hash and marker is computed (a bare count()
    would let Spark prune those columns and read nothing but offsets): (records, marked, XOR of
    the records' hashes), the same whichever executor read which partition."""
    frame = read_records(spark, "source", config, window, ["lob"])
    row = frame.agg(F.count("*").alias("records"), F.count("marker").alias("marked"),
                    F.bit_xor(F.xxhash64("record_hash")).alias("hashes")).first()
    return int(row["records"]), int(row["marked"]), int(row["hashes"])


# -- CPU: who used the cores during a scan -----------------------------------------------------


@dataclass
class Run:
    answer: tuple[int, int, int]
    seconds: float
    cpu: dict[str, float] = field(default_factory=dict)  # core-seconds per side during the run
    machine: float = 0.0  # core-seconds the whole machine was busy during the run

    def busy(self) -> dict[str, float]:
        """Cores busy per side (core-seconds per wall second), `other` being every other process."""
        sides = {side: seconds / self.seconds for side, seconds in self.cpu.items()}
        sides["other"] = max(0.0, self.machine / self.seconds - sum(sides.values()))
        return sides

    @property
    def rate(self) -> float:
        return self.answer[0] / self.seconds


def timed(spark: SparkSession, config: dict, window: dict, sides: dict[str, Callable[[], float]]) -> Run:
    before = {name: probe() for name, probe in sides.items()}
    machine = machine_busy_seconds()
    began = time.perf_counter()
    answer = spark_scan(spark, config, window)
    seconds = time.perf_counter() - began
    return Run(answer, seconds, {name: probe() - before[name] for name, probe in sides.items()},
               machine_busy_seconds() - machine)


# -- modes -------------------------------------------------------------------------------------


def reference(config: dict, window: dict, runs: int) -> None:
    spark = spark_session("local[2]", "mm2gov-bench-scan",
                          settings={"spark.jars": ",".join(map(str, tools.spark_kafka_jars()))})
    spark_scan(spark, config, window)  # warm-up: JVM, connector classes
    plain_runs, spark_runs = [], []
    for _ in range(runs):  # alternated, so that both see the same machine
        plain_runs.append(consume_all(config, window))
        began = time.perf_counter()
        spark_runs.append((spark_scan(spark, config, window)[0], time.perf_counter() - began))
    spark.stop()
    print("reference: a plain consumer and the audit's Spark scan (local[2]), alternated")
    rates = {}
    for name, results in (("confluent-kafka consumer", plain_runs), ("Spark Kafka scan (audit)", spark_runs)):
        count, seconds = min(results, key=lambda run: run[1])
        rates[name] = count / seconds
        print(f"  {name:<26} {count:>8} records, best of {len(results)}: {seconds:6.2f} s "
              f"{rates[name]:>10,.0f} records/s  (all: {', '.join(f'{s:.2f}' for _, s in results)} s)")
    ratio = rates["Spark Kafka scan (audit)"] / rates["confluent-kafka consumer"]
    verdict = "met" if ratio >= 0.5 else "MISSED"
    print(f"  target: Spark scan at least 50% of the plain consumer -> {ratio:.0%} ({verdict})")


def cluster(config: dict, window: dict, runs: int, broker_pid: int, scratch: Path) -> None:
    jars = ",".join(map(str, tools.spark_kafka_jars()))
    results: dict[str, list[Run]] = {}

    def measure(name: str, master: str, settings: dict[str, str], executors: dict[str, Callable[[], float]]) -> None:
        spark = spark_session(master, f"mm2gov-bench-scan {name}", settings={"spark.jars": jars, **settings})
        driver = SparkContext._gateway.proc.pid  # the driver JVM (local[2]: it runs the tasks too)
        sides = {**executors, "broker": lambda: group_cpu_seconds(broker_pid),
                 "driver" if executors else "driver+tasks": lambda: process_cpu_seconds(driver) + sum(os.times()[:2])}
        spark_scan(spark, config, window)  # warm-up (JVMs, JIT, executors, connector classes), not counted
        results[name] = [timed(spark, config, window, sides) for _ in range(runs)]
        spark.stop()
        best = min(results[name], key=lambda run: run.seconds)
        print(f"  {name:<22} best of {runs}: {best.seconds:6.2f} s {best.rate:>10,.0f} records/s  "
              f"(all: {', '.join(f'{r.seconds:.2f}' for r in results[name])} s)")

    print(f"cluster: the audit's Spark scan of {sum(e - s for p in window.values() for s, e in p.values())} records, "
          f"{PARTITIONS} partitions, on {os.cpu_count()} cores")
    measure("local[2]", "local[2]", {}, {})
    for workers in (1, 2):
        with SparkStandalone(scratch / f"spark-{workers}w", workers=workers, cores=1, memory="2g") as standalone:
            pids = [p for name, p in standalone.pids().items() if name.startswith("spark-worker")]
            executors = {"executors": lambda pids=pids: sum(group_cpu_seconds(pid) for pid in pids)}
            measure(f"standalone, {workers} worker{'s' if workers > 1 else ''}", standalone.url,
                    {"spark.cores.max": str(workers), "spark.executor.memory": "1g",
                     "spark.scheduler.minRegisteredResourcesRatio": "1.0"}, executors)

    answers = {run.answer for rs in results.values() for run in rs}
    expected = sum(end - start for parts in window.values() for start, end in parts.values())
    assert len(answers) == 1, f"the modes disagree: {answers}"  # whichever master and executor read what
    [(records, marked, hashes)] = answers
    assert records == marked == expected, answers
    print(f"  answers: identical in every run ({records} records, all marked, hash XOR {hashes & (2**64 - 1):016x})")

    best = {name: min(rs, key=lambda run: run.seconds) for name, rs in results.items()}
    one, two = best["standalone, 1 worker"], best["standalone, 2 workers"]
    ratio = two.rate / one.rate
    print(f"  2 workers / 1 worker: {ratio:.2f}x (ideal 2.00x); 2 workers / local[2]: "
          f"{two.rate / best['local[2]'].rate:.2f}x")
    print("  cores busy during the best run (CPU seconds per wall second, from /proc; the machine has "
          f"{os.cpu_count()} cores; other = every other process on it):")
    for name, run in best.items():
        busy = run.busy()
        print(f"    {name:<22} " + ", ".join(f"{side} {value:.2f}" for side, value in busy.items())
              + f"  = {sum(busy.values()):.2f}")
    print("  " + scaling_verdict(one, two, ratio))


def scaling_verdict(one: Run, two: Run, ratio: float) -> str:
    """Where the scan stops scaling, from the figures: the 2-worker run's CPU against the cores."""
    cores = os.cpu_count() or 1
    busy = two.busy()
    total = sum(busy.values())
    alone = one.busy().get("executors", 0)
    others = ", ".join(f"{side} {value:.2f}" for side, value in sorted(busy.items(), key=lambda kv: -kv[1])
                       if side != "executors")
    shared = (f" Other processes took {busy['other']:.2f} cores of this machine during that run: the figures "
              "are skewed by them; rerun on a quiet machine to compare." if busy["other"] >= 0.25 else "")
    if total >= 0.85 * cores:
        return (f"where it stops scaling: at 2 executors on {cores} cores. With two, the cores are "
                f"{total / cores:.0%} busy (executors {busy.get('executors', 0):.2f}, {others}); one "
                f"executor alone kept {alone:.2f} cores busy"
                + (" (a one-core worker gives one task slot, not one CPU: the executor's JIT, GC and network "
                   "threads run beside the task)" if alone > 1 else "")
                + f", so the second executor only gets what is left: {ratio:.2f}x for twice the executors. More "
                "executors need more cores (or the broker and the driver on other machines)." + shared)
    return (f"not CPU-bound at 2 executors ({total:.2f} of {cores} cores busy: executors "
            f"{busy.get('executors', 0):.2f}, {others}); {ratio:.2f}x for twice the executors: the limit is "
            f"elsewhere (fetches from the one broker, task scheduling, {PARTITIONS} partitions for the tasks)."
            + shared)


@dataclass(frozen=True)
class Variant:
    """One way of scanning the topic: which columns, which reader options, which session settings."""
    name: str
    columns: Callable[[DataFrame], DataFrame]  # the Kafka source's rows -> what the variant computes
    options: dict[str, str] = field(default_factory=dict)  # reader options over SCAN_FETCH_OPTIONS
    conf: dict[str, str] = field(default_factory=dict)  # session settings during the scan


def answer(frame: DataFrame) -> tuple[int, ...]:
    """count(*), plus count(marker) and the XOR of the hashes where the frame has them: every column
    is computed (a bare count() of a projection would let Spark prune it)."""
    aggregates = [F.count("*")]
    if "marker" in frame.columns:
        aggregates.append(F.count("marker"))
    if "record_hash" in frame.columns:
        aggregates.append(F.bit_xor(F.xxhash64("record_hash")))
    return tuple(int(v) for v in frame.agg(*aggregates).first())


def sha256_hash() -> Column:
    """The audit's record hash before issue 26: SHA-256 (hex) of key NUL value NUL timestamp."""
    return F.sha2(F.concat(F.coalesce("key", F.lit(b"")), F.lit(b"\x00"), F.coalesce("value", F.lit(b"")),
                           F.lit(b"\x00"), F.unix_millis("timestamp").cast("string").cast("binary")), 256)


def filter_marker(name: str) -> Column:
    """The audit's marker before issue 26: the first header of that name, found by a filter() lambda."""
    return F.get(F.expr(f"filter(headers, h -> h.key IN ({json.dumps(name)}))"), 0).getField("value").cast("string")


def variants_of_the_scan() -> list[Variant]:
    """The audit's scan before and after issue 26, and each of its parts alone."""
    v1 = {V1_SOURCES: ",".join(sorted([*SETTINGS[V1_SOURCES].split(","), "kafka"]))}  # Spark's default
    before = lambda raw: raw.select("topic", "partition", "offset", sha256_hash().alias("record_hash"),  # noqa: E731
                                    filter_marker("lob").alias("marker"))
    audit = lambda raw: record_rows(raw, "source", ["lob"])  # noqa: E731
    return [
        Variant("before: V1, SHA-256, filter()", before, conf=v1),
        Variant("rows only, V1 source", lambda raw: raw, conf=v1),
        Variant("rows only", lambda raw: raw),
        Variant("rows + SHA-256", lambda raw: raw.select(sha256_hash().alias("record_hash"))),
        Variant("rows + xxHash64", lambda raw: raw.select(record_hash().alias("record_hash"))),
        Variant("rows + marker, filter()", lambda raw: raw.select(filter_marker("lob").alias("marker"))),
        Variant("rows + marker, array_position", lambda raw: raw.select(record_marker(["lob"]).alias("marker"))),
        Variant("audit (xxHash64 + marker)", audit),
        Variant("audit, minPartitions 8", audit, options={"minPartitions": "8"}),
        Variant("audit, receive buffer: OS", audit, options={"kafka.receive.buffer.bytes": "-1"}),
        Variant("audit, 1 MiB fetches", audit, options={"kafka.max.partition.fetch.bytes": str(1024 * 1024)}),
    ]


def variants(config: dict, window: dict, runs: int) -> None:
    """Where the scan's time goes: each variant and the plain consumer, alternated, on a warm local[2]."""
    spark = spark_session("local[2]", "mm2gov-bench-scan",
                          settings={"spark.jars": ",".join(map(str, tools.spark_kafka_jars()))})
    chosen = variants_of_the_scan()
    jvm = SparkContext._gateway.proc.pid  # local[2]: the driver JVM runs the tasks
    plain: list[tuple[int, float]] = []
    plain_cpu: list[float] = []  # this process: librdkafka's threads and the Python loop
    seconds: dict[str, list[float]] = {v.name: [] for v in chosen}
    cpu: dict[str, list[float]] = {v.name: [] for v in chosen}  # the JVM's core-seconds per run
    answers: dict[str, set[tuple[int, ...]]] = {v.name: set() for v in chosen}

    def scan(variant: Variant) -> tuple[int, ...]:
        saved = {key: spark.conf.get(key) for key in variant.conf}
        for key, value in variant.conf.items():
            spark.conf.set(key, value)
        try:
            return answer(variant.columns(kafka_frame(spark, config, window, variant.options)))
        finally:
            for key, value in saved.items():
                spark.conf.set(key, value)

    for variant in chosen:
        scan(variant)  # warm-up: JVM, JIT, connector classes, each variant's code
    for _ in range(runs):  # alternated, so that each sees the same machine
        before = sum(os.times()[:2])
        plain.append(consume_all(config, window))
        plain_cpu.append(sum(os.times()[:2]) - before)
        for variant in chosen:
            before, began = process_cpu_seconds(jvm), time.perf_counter()
            answers[variant.name].add(scan(variant))
            seconds[variant.name].append(time.perf_counter() - began)
            cpu[variant.name].append(process_cpu_seconds(jvm) - before)
    spark.stop()
    expected = sum(end - start for parts in window.values() for start, end in parts.values())
    assert all(len(a) == 1 and next(iter(a))[0] == expected for a in answers.values()), answers
    audits = {answer for v in chosen if v.name.startswith("audit") for answer in answers[v.name]}
    befores = {answer[:2] for v in chosen if v.name.startswith("before") for answer in answers[v.name]}
    assert len(audits) == 1, f"the audit's variants disagree: {audits}"
    assert befores == {answer[:2] for answer in audits}, (befores, audits)  # records and marked: the same
    count, best_plain = min(plain, key=lambda run: run[1])
    plain_rate = count / best_plain
    print(f"variants: {expected} records, local[2], best of {runs}, alternated with the plain consumer; "
          "CPU: the reader's core-seconds, least of the runs")
    print(f"  {'confluent-kafka consumer':<34} {best_plain:6.2f} s {plain_rate:>10,.0f} records/s  100%  "
          f"CPU {min(plain_cpu):5.2f}")
    for variant in chosen:
        best = min(seconds[variant.name])
        print(f"  {variant.name:<34} {best:6.2f} s {expected / best:>10,.0f} records/s  "
              f"{expected / best / plain_rate:4.0%}  CPU {min(cpu[variant.name]):5.2f}  "
              f"(all: {', '.join(f'{s:.2f}' for s in seconds[variant.name])} s)")


def partitions(config: dict, topics: int, runs: int) -> None:
    names = [f"bench.small.{i}" for i in range(topics)]
    create_topics(admin_client(config), names, partitions=1)
    producer = Producer(config)
    for name in names:
        for i in range(5):
            producer.produce(name, key=str(i).encode(), value=b"v", headers=[("lob", b"bench")])
    assert producer.flush(60) == 0
    window = offset_window(config, dict.fromkeys(names, 1), 100)
    spark = spark_session("local[2]", "mm2gov-bench-scan",
                          settings={"spark.jars": ",".join(map(str, tools.spark_kafka_jars()))})
    audit = dict(scan_options.SCAN_FETCH_OPTIONS)
    kafka_default = {**audit, "kafka.fetch.max.wait.ms": "500"}  # the consumer's own default
    spark_scan(spark, config, window)  # warm-up: JVM, connector classes
    times: dict[str, list[float]] = {"audit": [], "kafka default wait": []}
    answers = set()
    try:
        for _ in range(runs):  # alternated, so that both see the same machine
            for label, options in (("audit", audit), ("kafka default wait", kafka_default)):
                scan_options.SCAN_FETCH_OPTIONS.clear()
                scan_options.SCAN_FETCH_OPTIONS.update(options)
                began = time.perf_counter()
                answers.add(spark_scan(spark, config, window))
                times[label].append(time.perf_counter() - began)
    finally:
        scan_options.SCAN_FETCH_OPTIONS.clear()
        scan_options.SCAN_FETCH_OPTIONS.update(audit)
    assert len(answers) == 1, f"the scans disagree: {answers}"
    [(records, marked, _)] = answers
    assert records == marked == 5 * topics, answers
    print(f"partitions: {topics} one-partition topics, {records} records, local[2], best of {runs}")
    for label, seconds in times.items():
        print(f"  {label:<20} {min(seconds):6.2f} s  ({1000 * min(seconds) / topics:5.0f} ms per partition;"
              f" runs {', '.join(f'{s:.2f}' for s in seconds)})")
    print(f"  the audit's scan in {min(times['audit']) / min(times['kafka default wait']):.0%} of the time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["all", "reference", "cluster", "partitions", "variants"], default="all")
    parser.add_argument("--small-topics", type=int, default=60, help="topics of the partitions mode")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--value-bytes", type=int, default=512)
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each reader; the best counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-scan-") as tmp:
        stack = Stack(StackSpec(run_dir=Path(tmp) / "stack", components=("kafka",),
                                kafka_clusters=("source",))).up()
        try:
            config = stack.kafka["source"].admin_config()
            if args.mode != "partitions":
                create_topics(admin_client(config), [TOPIC], partitions=PARTITIONS)
                began = time.perf_counter()
                fill(config, args.records, args.value_bytes)
                print(f"wrote {args.records} records ({args.value_bytes}-byte values, {PARTITIONS} partitions) "
                      f"in {time.perf_counter() - began:.1f} s")
                window = offset_window(config, {TOPIC: PARTITIONS}, args.records)
            if args.mode == "variants":
                variants(config, window, args.runs)
            if args.mode in ("all", "reference"):
                reference(config, window, args.runs)
            if args.mode in ("all", "cluster"):
                cluster(config, window, args.runs, stack.kafka["source"].process.pid, Path(tmp))
            if args.mode in ("all", "partitions"):
                partitions(config, args.small_topics, args.runs)
        finally:
            stack.down()


if __name__ == "__main__":
    main()
