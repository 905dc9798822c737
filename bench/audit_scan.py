"""Benchmark: the audit's record scan (Spark's Kafka source) against a plain confluent-kafka consumer.

Starts one real Kafka broker (the local stack's, SASL_SSL + SCRAM), writes a topic of
`--records` records over 4 partitions with a tenant-marker header, then reads the whole
topic twice in the same run: with a confluent-kafka Consumer (the reference) and with
`spark_audit.records.read_records` on local[2] (hash + marker per record, as the audit
does; Spark session start not counted), alternately, `--runs` times each. Prints the best
records/s of each (and every run's time) and the ratio.
Target: the Spark scan reaches at least 50% of the plain consumer's rate.

Usage: python bench/audit_scan.py [--records 1000000] [--value-bytes 512] [--runs 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the repo, not bench/ (bench/secrets.py: stdlib name)

from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from governance.devstack import tools  # noqa: E402
from governance.devstack.stack import Stack, StackSpec  # noqa: E402
from governance.kafka.admin import admin_client, create_topics  # noqa: E402
from spark_audit.records import offset_window, read_records  # noqa: E402
from spark_audit.run import spark_session  # noqa: E402

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


def spark_scan(spark: SparkSession, config: dict, window: dict) -> int:
    """The audit's scan, aggregated so that every hash and marker is computed (a bare count()
    would let Spark prune those columns and read nothing but offsets)."""
    frame = read_records(spark, "source", config, window, ["lob"])
    row = frame.agg(F.count("*").alias("records"), F.count("marker"), F.max("record_hash")).first()
    return int(row["records"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--value-bytes", type=int, default=512)
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each reader; the best counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-scan-") as tmp:
        stack = Stack(StackSpec(run_dir=Path(tmp), components=("kafka",), kafka_clusters=("source",))).up()
        try:
            config = stack.kafka["source"].admin_config()
            create_topics(admin_client(config), [TOPIC], partitions=PARTITIONS)
            began = time.perf_counter()
            fill(config, args.records, args.value_bytes)
            print(f"wrote {args.records} records ({args.value_bytes}-byte values, {PARTITIONS} partitions) "
                  f"in {time.perf_counter() - began:.1f} s")
            window = offset_window(config, {TOPIC: PARTITIONS}, args.records)
            spark = spark_session("local[2]", settings={"spark.jars": ",".join(map(str, tools.spark_kafka_jars()))})
            spark_scan(spark, config, window)  # warm-up: JVM, connector classes
            plain_runs, spark_runs = [], []
            for _ in range(args.runs):  # alternated, so that both see the same machine
                plain_runs.append(consume_all(config, window))
                began = time.perf_counter()
                spark_runs.append((spark_scan(spark, config, window), time.perf_counter() - began))
            spark.stop()
        finally:
            stack.down()
    rates = {}
    for name, runs in (("confluent-kafka consumer", plain_runs), ("Spark Kafka scan (audit)", spark_runs)):
        count, seconds = min(runs, key=lambda run: run[1])
        rates[name] = count / seconds
        print(f"  {name}  {count:>8} records, best of {len(runs)}: {seconds:6.2f} s  {rates[name]:>10,.0f} records/s"
              f"  (all: {', '.join(f'{s:.2f}' for _, s in runs)} s)")
    ratio = rates["Spark Kafka scan (audit)"] / rates["confluent-kafka consumer"]
    verdict = "met" if ratio >= 0.5 else "MISSED"
    print(f"target: Spark scan at least 50% of the plain consumer -> {ratio:.0%} ({verdict})")


if __name__ == "__main__":
    main()
