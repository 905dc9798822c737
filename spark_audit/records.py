"""Read the replicated records with Spark's Kafka source, bounded per partition.

The driver asks each cluster for its partitions' watermarks and picks a window (the
last `per_partition` records of each partition); Spark reads exactly those offset
ranges, one task per partition, so the scan grows with executors. Only what the
detectors need leaves the executors: partition, offset, timestamp, a hash of key +
value + timestamp, and the tenant-marker header. Keys and values are never collected.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_audit.model import SNAPSHOT_SCHEMAS, empty_frame

SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"


# Records as a consumer of the topic sees them: committed only. An exactly-once flow's target holds the
# records of transactions MM2 aborted (a crash mid-transaction, then fencing): read uncommitted they
# look like duplicates no consumer ever gets (tests/integration/test_mm2_exactly_once.py). The window
# ends at the last stable offset for the same reason, so a transaction left open on a topic hides the
# records after it from the scan, as from every read_committed consumer, instead of stalling it.
ISOLATION_LEVEL = "read_committed"


def spark_kafka_options(config: dict[str, Any]) -> dict[str, str]:
    """Spark Kafka source options (`kafka.*`) equivalent to a confluent-kafka client config."""
    options = {"kafka.bootstrap.servers": config["bootstrap.servers"],
               "kafka.security.protocol": config.get("security.protocol", "PLAINTEXT"),
               "kafka.isolation.level": ISOLATION_LEVEL}
    if "sasl.mechanism" in config:
        module = PLAIN_MODULE if config["sasl.mechanism"] == "PLAIN" else SCRAM_MODULE
        user = json.dumps(config["sasl.username"])
        password = json.dumps(config["sasl.password"])
        options["kafka.sasl.mechanism"] = config["sasl.mechanism"]
        options["kafka.sasl.jaas.config"] = f"{module} required username={user} password={password};"
    if "ssl.ca.pem" in config:
        options["kafka.ssl.truststore.type"] = "PEM"
        options["kafka.ssl.truststore.certificates"] = config["ssl.ca.pem"]
    elif "ssl.ca.location" in config:
        options["kafka.ssl.truststore.type"] = "PEM"
        options["kafka.ssl.truststore.location"] = config["ssl.ca.location"]
    return options


def offset_window(config: dict[str, Any], topics: dict[str, int], per_partition: int,
                  timeout: float = 30) -> dict[str, dict[int, tuple[int, int]]]:
    """topic -> partition -> [start, end) covering at most the last `per_partition` offsets, up to the
    last stable offset (a read_committed consumer's high watermark)."""
    # librdkafka's own log goes through Python logging (scrubbed, one format), not straight to stderr
    consumer = Consumer({**config, "group.id": "mm2gov-audit-watermarks", "enable.auto.commit": False,
                         "isolation.level": ISOLATION_LEVEL},
                        logger=logging.getLogger("mm2gov.librdkafka"))
    try:
        window: dict[str, dict[int, tuple[int, int]]] = {}
        for topic, partitions in sorted(topics.items()):
            for partition in range(partitions):
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout)
                if high > low:
                    window.setdefault(topic, {})[partition] = (max(low, high - per_partition), high)
        return window
    finally:
        consumer.close()


# Larger fetches than the Java consumer's defaults (1 MiB per partition): the scan reads whole
# windows, and fewer round trips made it ~30% faster (bench/audit_scan.py, 1M records).
# A short fetch wait: the windows are closed (they end at the last stable offset), so the broker holding a
# fetch for fetch.min.bytes (the default 500 ms) only delays each partition's last fetch; with many small
# partitions that wait was most of the scan (bench/audit_scan.py --mode partitions).
SCAN_FETCH_OPTIONS = {"kafka.max.partition.fetch.bytes": str(10 * 1024 * 1024),
                      "kafka.fetch.max.bytes": str(50 * 1024 * 1024),
                      "kafka.fetch.max.wait.ms": "10"}


def read_records(spark: SparkSession, alias: str, config: dict[str, Any],
                 window: dict[str, dict[int, tuple[int, int]]], marker_headers: Iterable[str]) -> DataFrame:
    """The `records` table rows of one cluster's window (an empty frame when the window is empty)."""
    if not window:
        return empty_frame(spark, SNAPSHOT_SCHEMAS["records"])
    return record_rows(kafka_frame(spark, config, window), alias, marker_headers)


def kafka_frame(spark: SparkSession, config: dict[str, Any], window: dict[str, dict[int, tuple[int, int]]],
                options: dict[str, str] | None = None) -> DataFrame:
    """Spark's Kafka source over exactly the window's offsets, headers included; `options` over
    SCAN_FETCH_OPTIONS (the benchmark's variants)."""
    starting = {topic: {str(p): start for p, (start, _) in parts.items()} for topic, parts in window.items()}
    ending = {topic: {str(p): end for p, (_, end) in parts.items()} for topic, parts in window.items()}
    assign = {topic: sorted(parts) for topic, parts in window.items()}
    fetch = {**SCAN_FETCH_OPTIONS, **(options or {})}
    return (spark.read.format("kafka").options(**spark_kafka_options(config), **fetch)
            .option("assign", json.dumps(assign)).option("startingOffsets", json.dumps(starting))
            .option("endingOffsets", json.dumps(ending)).option("includeHeaders", "true")
            .option("failOnDataLoss", "false").load())


def record_hash() -> Column:
    """The same record on two clusters: xxHash64 of key, value and timestamp (ms), as a decimal string.

    A JVM builtin over the columns as they are, where SHA-256 (Spark's sha2 over a concatenated copy,
    then hex) cost more CPU than reading the records: 1M records of 512 bytes took 2.6-3.2 core-s to
    read, 3.3-3.6 with xxHash64, 6.1 with SHA-256 (the tasks' CPU in Spark's event log, this 2-core
    machine, 2026-11-27; bench/audit_scan.py --mode variants runs the same variants). The hash
    only matches copies within one partition's window (spark_audit/checks/replication_gap.py): 64 bits
    make an accidental collision among a window's records negligible (about n^2 / 2^65). A null key or
    value hashes as an empty one, as before; the columns are hashed one after the other (each result
    seeds the next), so no separator is needed between them."""
    return F.xxhash64(F.coalesce("key", F.lit(b"")), F.coalesce("value", F.lit(b"")),
                      F.unix_millis("timestamp")).cast("string")


def record_marker(marker_headers: Iterable[str]) -> Column:
    """The value of the record's first header named one of `marker_headers` (null without one).

    The first position of each name in the header keys (array_position, compiled with the rest of
    the scan), the smallest of those: not a filter() lambda over every header, which Spark evaluates
    record by record outside its generated code (1M one-header records: 3.05 core-s with the marker
    by array_position, 3.4 by filter(), 2.65-3.2 for the rows alone; measured as record_hash's)."""
    names = sorted(set(marker_headers))
    if not names:
        return F.lit(None).cast("string")
    keys = F.col("headers").getField("key")  # null for a record without headers: the marker is null
    positions = [F.nullif(F.array_position(keys, name), F.lit(0)) for name in names]  # 1-based; 0: absent
    first = positions[0] if len(positions) == 1 else F.least(*positions)  # least skips nulls
    # F.get, not [i]: under ANSI mode (Spark 4's default) indexing out of range is an error; get gives null.
    return F.get("headers", first - 1).getField("value").cast("string")


def record_rows(raw: DataFrame, alias: str, marker_headers: Iterable[str]) -> DataFrame:
    """The `records` table's columns from the Kafka source's rows."""
    return raw.select(F.lit(alias).alias("cluster"), "topic", "partition", "offset",
                      F.unix_millis("timestamp").alias("timestamp"), record_hash().alias("record_hash"),
                      record_marker(marker_headers).alias("marker"),
                      F.lit(None).cast("map<string,string>").alias("headers"))
