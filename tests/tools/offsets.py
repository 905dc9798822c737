"""A topic's end offsets as the broker has them now: how the MM2 tests count what a flow copied."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from confluent_kafka import Consumer, TopicPartition


def end_offsets(config: dict[str, Any], topic: str, partitions: Iterable[int] | None = None) -> dict[int, int]:
    """{partition: end offset} of `topic`, for `partitions` or else every partition the metadata lists ({} while
    the topic does not exist). Uncached: a fresh ListOffsets each call. Raises KafkaException while a partition
    has no leader yet (MM2 still creating the topic)."""
    consumer = Consumer({**config, "group.id": f"mm2gov-test-ends-{uuid.uuid4().hex[:8]}"})
    try:
        if partitions is None:
            partitions = consumer.list_topics(topic, timeout=20).topics[topic].partitions
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=20, cached=False)[1]
                for p in partitions}
    finally:
        consumer.close()


def total_end_offset(config: dict[str, Any], topic: str, partitions: Iterable[int] | None = None) -> int:
    """The sum of `topic`'s end offsets: its records and, on an exactly-once target, its transaction markers."""
    return sum(end_offsets(config, topic, partitions).values())


def deepest_partition(*topics: tuple[dict[str, Any], str]) -> int:
    """The largest end offset among the partitions of these (cluster config, topic) pairs: an audit window
    (--records-per-partition) of this many reads every record of them, transaction markers included, and no
    deeper into the other topics a shared test stack holds."""
    return max(max(end_offsets(config, topic).values(), default=0) for config, topic in topics)
