"""Run the detectors: the audit's SparkSession (local or a cluster) and every check's findings.

`run_checks` is what `mm2gov audit` (and a spark-submit job) calls once it has
a Snapshot and a Tenancy; nothing here talks to a Kafka cluster.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

from pyspark import SparkConf, SparkContext
from pyspark.sql import Row, SparkSession

from spark_audit.checks import CHECKS
from spark_audit.findings import COLUMNS
from spark_audit.model import Snapshot, Tenancy

CONF_DIR = Path(__file__).parent / "conf"  # log4j2.properties: errors only, on stderr
LOG4J2_OPTION = f"-Dlog4j2.configurationFile=file:{CONF_DIR / 'log4j2.properties'}"
LOOPBACK = "127.0.0.1"
V1_SOURCES = "spark.sql.sources.useV1SourceList"  # data sources read through Spark's V1 API

# Always, on any master: no console progress bars, the terminal shows the audit's own progress
# lines (spark-submit turns them on for PySpark's driver, which it counts as a shell).
FIXED_SETTINGS = {"spark.ui.showConsoleProgress": "false"}
# Defaults for any master: what Spark is configured with (spark-defaults.conf, spark-submit --conf,
# PYSPARK_SUBMIT_ARGS) wins.
SETTINGS = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "4",  # small data: 200 partitions would be 200 tiny tasks per join
    "spark.default.parallelism": "4",
    "spark.sql.session.timeZone": "UTC",
    # PySpark 4's DataFrame debugging records the Python call site of every Column and DataFrame function in the
    # JVM (about 10 py4j round trips and a walk of the Python stack per call: F.col took 2.7 ms, 0.55 ms
    # without, measured here). Spark documents its overhead; the audit builds thousands of expressions, and its
    # own errors name the check.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    # Spark 4.0's list without "kafka": the record scan reads through the Kafka source's V2 reader,
    # which makes each record an UnsafeRow once, not its V1 relation, which builds a Row per record
    # and converts it back (1M records of 512 bytes: 2.6 core-s to read instead of 3.6-4.0, the tasks'
    # CPU in Spark's event log on this 2-core machine; bench/audit_scan.py --mode variants runs both).
    # Every other source keeps Spark's default (the audit's Parquet history among them).
    V1_SOURCES: "avro,csv,json,orc,parquet,text",
}
# Where driver and executors share this machine (local[N], or a standalone master on loopback):
# everything stays on loopback, and executors can use this Python and this log4j2.properties.
THIS_MACHINE_SETTINGS = {
    "spark.driver.bindAddress": LOOPBACK,
    "spark.driver.host": LOOPBACK,
}
# local mode only: the driver is the executor; fits a 2-core / 24 GiB machine. Set at JVM launch.
LOCAL_SETTINGS = {"spark.driver.memory": "4g"}


def on_this_machine(master: str) -> bool:
    """local[N], or a master URL whose host is a loopback address."""
    if master.startswith("local"):
        return True
    host = urlsplit(master.split(",")[0]).hostname or ""
    return host == "localhost" or host.startswith("127.") or host == "::1"


def spark_session(master: str = "local[2]", app_name: str = "mm2gov-audit",
                  settings: dict[str, str] | None = None) -> SparkSession:
    """A SparkSession for the audit: `master` (empty under spark-submit, which sets it) and
    `settings` (applied as given, e.g. spark.jars) over the defaults above."""
    logging.getLogger("py4j").setLevel(logging.WARNING)  # one INFO line per closed py4j connection
    os.environ.setdefault("SPARK_CONF_DIR", str(CONF_DIR))  # log4j for a driver JVM started from here
    if master and on_this_machine(master):
        os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    launch = {**(LOCAL_SETTINGS if master.startswith("local") else {}), **FIXED_SETTINGS, **(settings or {})}
    if master:
        launch["spark.master"] = master
    # Start the JVM (or, under spark-submit, attach to it) with what must be known at launch
    # (driver memory, jars), then read what Spark was configured with, so defaults yield to it.
    SparkContext._ensure_initialized(conf=SparkConf(loadDefaults=False).setAll(launch.items()))
    configured = SparkConf()
    effective_master = master or configured.get("spark.master", "")  # under spark-submit: its --master
    defaults = dict(SETTINGS)
    if on_this_machine(effective_master):
        defaults.update(THIS_MACHINE_SETTINGS)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # executors' Python workers: this one
        if not effective_master.startswith("local"):  # executor JVMs of a loopback cluster: our log4j
            defaults["spark.executor.extraJavaOptions"] = LOG4J2_OPTION
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    for key, value in defaults.items():
        if not configured.contains(key):
            builder = builder.config(key, value)
    for key, value in launch.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_checks(spark: SparkSession, snapshot: Snapshot, tenancy: Tenancy, checks: Iterable[str] | None = None,
               progress: Callable[[str], None] | None = None, threads: int = 4) -> list[Row]:
    """Every (or the named) check's findings, as rows in the findings schema.

    The checks run as concurrent Spark jobs: on a small estate each is a chain of short stages
    whose time is mostly driver and scheduling latency, which overlaps (about 2x faster than one
    union of all checks on 2 cores); on a large one they share the executors."""
    selected = list(CHECKS) if checks is None else list(checks)
    unknown = [c for c in selected if c not in CHECKS]
    if unknown:
        raise ValueError(f"unknown checks: {', '.join(unknown)} (known: {', '.join(CHECKS)})")

    def detect(check_id: str) -> list[Row]:
        spark.sparkContext.setJobDescription(f"mm2gov check {check_id}")  # this thread's jobs, in UI and event log
        found = CHECKS[check_id].detect(snapshot, tenancy).select(*COLUMNS).collect()
        if progress:
            progress(f"  {check_id}: {len(found)} finding(s)")
        return found

    with ThreadPoolExecutor(max(1, threads)) as pool:
        return [row for rows in pool.map(detect, selected) for row in rows]
