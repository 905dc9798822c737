"""Unit-test fixtures: one local SparkSession for the audit tests (starting one takes ~10 s)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """A local[2] SparkSession shared by every test that asks for it; started on first use only."""
    from spark_audit.run import spark_session

    session = spark_session("local[2]", "mm2gov-audit-tests", {"spark.sql.shuffle.partitions": "1",
                                                                "spark.default.parallelism": "1"})
    yield session
    session.stop()
