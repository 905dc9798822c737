"""Unit-test fixtures: one local SparkSession for the audit tests (starting one takes ~10 s)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that start the local SparkSession are marked `spark`: `make test-fast` leaves them out."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """A local[2] SparkSession shared by every test that asks for it; started on first use only."""
    from spark_audit.run import spark_session

    # Test data is tiny and the JVM short-lived: one partition per shuffle, the JIT's quick tier
    # only and no generated Java (compiling Spark's code, or the queries', would cost more CPU
    # than running them). The queries' semantics do not depend on these settings.
    session = spark_session("local[2]", "mm2gov-audit-tests", {
        "spark.sql.shuffle.partitions": "1", "spark.default.parallelism": "1",
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        "spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"})
    yield session
    session.stop()
