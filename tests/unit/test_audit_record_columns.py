"""The record scan's columns (spark_audit/records.py) on rows shaped as Spark's Kafka source gives them.

The marker is the value of a record's first header named one of the tenants' marker headers, null
without one; the hash tells the same record on two clusters apart from every other record of the window.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pyspark.sql.types import ArrayType, BinaryType, StringType, StructField, StructType, TimestampType

from spark_audit.records import record_hash, record_marker

HEADER = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
KAFKA_ROWS = StructType([StructField("key", BinaryType()), StructField("value", BinaryType()),
                         StructField("timestamp", TimestampType()), StructField("headers", ArrayType(HEADER))])
WHEN = dt.datetime(2026, 11, 27, 12, 0, 0, 123000, tzinfo=dt.UTC)


def rows(spark: Any, records: list[tuple[bytes | None, bytes | None, dt.datetime, list | None]]) -> Any:
    return spark.createDataFrame(records, KAFKA_ROWS)


@pytest.mark.parametrize(("headers", "marker"), [
    ([("trace", b"1"), ("tenant", b"t-b"), ("lob", b"lob-a")], "t-b"),  # the first of either name
    ([("lob", b"lob-a"), ("lob", b"lob-b")], "lob-a"),  # a repeated name: its first value
    ([("trace", b"1")], None),
    ([], None),
    (None, None),  # the Kafka source gives null for a record without headers
])
def test_the_marker_is_the_first_header_named_as_a_marker(spark: Any, headers: list | None,
                                                          marker: str | None) -> None:
    frame = rows(spark, [(b"k", b"v", WHEN, headers)])
    [row] = frame.select(record_marker(["lob", "tenant"]).alias("marker"),
                         record_marker(["tenant"]).alias("tenant_only"),
                         record_marker([]).alias("no_markers")).collect()
    assert row["marker"] == marker
    assert row["tenant_only"] == (marker if marker == "t-b" else None)
    assert row["no_markers"] is None


def test_the_hash_is_the_same_for_the_same_record_and_tells_others_apart(spark: Any) -> None:
    later = WHEN + dt.timedelta(milliseconds=1)
    records = [(b"k", b"v", WHEN, None), (b"k", b"v", WHEN, [("lob", b"x")]),  # headers are not hashed
               (None, b"v", WHEN, None), (b"", b"v", WHEN, None),  # a null key hashes as an empty one
               (b"ab", b"c", WHEN, None), (b"a", b"bc", WHEN, None),  # where the key ends counts
               (b"k", b"v", later, None), (b"k", None, WHEN, None), (b"k", b"", WHEN, None)]
    hashes = [row[0] for row in rows(spark, records).select(record_hash()).collect()]
    assert all(isinstance(h, str) for h in hashes)
    same, nulls, split, timed = hashes[0:2], hashes[2:4], hashes[4:6], [hashes[0], hashes[6]]
    assert same[0] == same[1] and nulls[0] == nulls[1] and hashes[7] == hashes[8]
    assert split[0] != split[1] and timed[0] != timed[1]
    assert len({hashes[0], hashes[2], hashes[4], hashes[5], hashes[6], hashes[7]}) == 6
