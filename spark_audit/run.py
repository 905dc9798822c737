"""Run the detectors: a local SparkSession and the union of every check's findings.

`run_checks` is what `mm2gov audit` (and a spark-submit job) calls once it has
a Snapshot and a Tenancy; nothing here talks to a cluster.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from pyspark.sql import DataFrame, SparkSession

from spark_audit.checks import CHECKS
from spark_audit.findings import empty_findings
from spark_audit.model import Snapshot, Tenancy

LOCAL_SETTINGS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",  # small data, 2 cores: 200 partitions would be 200 tiny tasks per join
    "spark.default.parallelism": "4",
    "spark.driver.memory": "4g",  # local mode: the driver is the executor; fits a 2-core / 24 GiB machine
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.sql.session.timeZone": "UTC",
}


def spark_session(master: str = "local[2]", app_name: str = "mm2gov-audit",
                  settings: dict[str, str] | None = None) -> SparkSession:
    """A SparkSession bound to loopback, without UI; `settings` override the local defaults."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.appName(app_name)
    if master:  # empty under spark-submit, which sets the master itself
        builder = builder.master(master)
    local = LOCAL_SETTINGS if master.startswith("local") else {}  # a cluster keeps its own settings
    for key, value in {**local, **(settings or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_checks(spark: SparkSession, snapshot: Snapshot, tenancy: Tenancy,
               checks: Iterable[str] | None = None) -> DataFrame:
    """Every (or the named) check's findings, as one DataFrame in the findings schema."""
    selected = list(CHECKS) if checks is None else list(checks)
    unknown = [c for c in selected if c not in CHECKS]
    if unknown:
        raise ValueError(f"unknown checks: {', '.join(unknown)} (known: {', '.join(CHECKS)})")
    result = empty_findings(spark)
    for check_id in selected:
        result = result.unionByName(CHECKS[check_id].detect(snapshot, tenancy))
    return result
