"""Spark settings for the suite's own Spark JVMs: its data is tiny and its JVMs short-lived.

- The JIT's quick tier only (QUICK_JVM): compiling Spark's code for peak speed costs more CPU than running
  the tests' queries (the unit tests' Spark work: 284 CPU-s with the full JIT against 202, 2026-11-27).
- Memory pages of 1 MiB (Spark's own floor) instead of the 64 MiB Spark derives from a 4 GiB driver: every
  broadcast hash relation takes at least one page, and the checks' dozens of broadcasts kept 1.2-2.7 GB live
  (18 s of full collections in the unit tests' audits; 0.4 GB and 5 s with 1 MiB, 20% less of the driver's
  CPU, 2026-11-28). Not the audit's default: its record scan of a million records was about 15% slower.

The queries' answers do not depend on either. A separate `mm2gov audit` gets them the way docs/audit.md tells
users to set Spark settings: PYSPARK_SUBMIT_ARGS.
"""

from __future__ import annotations

import shlex

from devstack.process import QUICK_JVM

QUICK_DRIVER = {"spark.driver.extraJavaOptions": " ".join(QUICK_JVM), "spark.buffer.pageSize": "1m"}


def conf_args(conf: dict[str, str]) -> list[str]:
    """`--conf key=value` for each setting, as spark-submit takes them."""
    return [arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}")]


def submit_args(conf: dict[str, str]) -> dict[str, str]:
    """The environment that gives a `mm2gov audit` process QUICK_DRIVER and `conf` (which wins)."""
    return {"PYSPARK_SUBMIT_ARGS": shlex.join(conf_args({**QUICK_DRIVER, **conf})) + " pyspark-shell"}
