"""A topic's end offsets as the broker has them now: how the MM2 tests count what a flow copied."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition


def end_offsets(config: dict[str, Any], topic: str, partitions: Iterable[int] | None = None) -> dict[int, int]:
    """{partition: end offset} of `topic`, for `partitions` or else every partition the metadata lists ({} while
    the topic does not exist). Uncached: a fresh ListOffsets each call. A partition asked for that does not exist
    yet, or has no leader yet (MM2 still creating the remote topic), holds nothing so far: 0. Any other error
    raises."""
    consumer = Consumer({**config, "group.id": f"mm2gov-test-ends-{uuid.uuid4().hex[:8]}"})
    try:
        if partitions is None:
            partitions = consumer.list_topics(topic, timeout=20).topics[topic].partitions
        return {p: _end_offset(consumer, TopicPartition(topic, p)) for p in partitions}
    finally:
        consumer.close()


NOT_THERE_YET = {KafkaError._UNKNOWN_PARTITION, KafkaError._UNKNOWN_TOPIC, KafkaError.UNKNOWN_TOPIC_OR_PART,
                 KafkaError.LEADER_NOT_AVAILABLE}


def _end_offset(consumer: Consumer, partition: TopicPartition) -> int:
    try:
        return consumer.get_watermark_offsets(partition, timeout=20, cached=False)[1]
    except KafkaException as error:
        if error.args[0].code() in NOT_THERE_YET:
            return 0
        raise


def total_end_offset(config: dict[str, Any], topic: str, partitions: Iterable[int] | None = None) -> int:
    """The sum of `topic`'s end offsets: its records and, on an exactly-once target, its transaction markers."""
    return sum(end_offsets(config, topic, partitions).values())


def deepest_partition(*topics: tuple[dict[str, Any], str]) -> int:
    """The largest end offset among the partitions of these (cluster config, topic) pairs: an audit window
    (--records-per-partition) of this many reads every record of them, transaction markers included, and no
    deeper into the other topics a shared test stack holds."""
    return max(max(end_offsets(config, topic).values(), default=0) for config, topic in topics)


Record = tuple[int, int, "bytes | None", "bytes | None"]  # partition, offset, key, value


def read_to_end(config: dict[str, Any], topic: str, partitions: Iterable[int],
                isolation: str = "read_committed", timeout: float = 300) -> tuple[list[Record], dict[int, int]]:
    """Every record of `topic`'s `partitions` to each one's end as of the call: (partition, offset, key, value)
    in each partition's order, and those ends. Empty partitions are not read. `consume` returns early only once
    its batch is full, so a short timeout per call (and the broker answering an empty fetch at once:
    fetch.wait.max.ms) keeps the tail of a read from waiting a second per call."""
    consumer = Consumer({**config, "group.id": f"mm2gov-test-read-{uuid.uuid4().hex[:8]}", "enable.auto.commit": False,
                         "isolation.level": isolation, "auto.offset.reset": "earliest", "fetch.wait.max.ms": 10})
    try:
        marks = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=20, cached=False)
                 for p in partitions}
        ends = {p: high for p, (low, high) in marks.items() if high > low}
        everything = {p: high for p, (_, high) in marks.items()}
        assigned = [TopicPartition(topic, p, 0) for p in ends]
        consumer.assign(assigned)
        records: list[Record] = []
        deadline = time.monotonic() + timeout
        while assigned and time.monotonic() < deadline:
            for message in consumer.consume(10_000, timeout=0.2):
                assert message.error() is None, message.error()
                records.append((message.partition(), message.offset(), message.key(), message.value()))
            if all(p.offset >= ends[p.partition] for p in consumer.position(assigned)):
                return records, everything
        if not assigned:
            return records, everything
        raise AssertionError(f"{topic} not read to its end {ends} in {timeout} s")
    finally:
        consumer.close()
