"""One read_committed consumer that joins no group and commits nothing: watermarks, record counts and
whole topics, for the commands that inspect what a flow wrote (failover, migrate, probe).

read_committed, since exactly-once MM2s write records and offsets in transactions: aborted ones never held.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from governance.errors import RuntimeFailure

TIMEOUT = 30.0  # one metadata or watermark request
READ_TIMEOUT = 180.0  # to read what was asked to its end


def kafka_failure(alias: str, what: str, exc: KafkaException) -> RuntimeFailure:
    """One line naming the cluster, what was being done and Kafka's error."""
    error = exc.args[0] if exc.args else None
    name, text = (error.name(), error.str()) if hasattr(error, "name") else (type(exc).__name__, str(exc))
    return RuntimeFailure(f"cluster {alias}: {what}: {name}: {text}")


class CommittedReader:
    """Reads as `config`'s principal; `purpose` names the (never joined) group id, for the brokers' logs."""

    def __init__(self, alias: str, config: dict[str, Any], purpose: str) -> None:
        self.alias = alias
        # Reads stop at ends known beforehand: the broker may answer a fetch at a partition's end at once
        # (its default holds it 500 ms, at every partition end and every EOF).
        self.consumer = Consumer({**config, "group.id": f"mm2gov-{purpose}-{uuid.uuid4().hex[:8]}",
                                  "enable.auto.commit": False, "enable.partition.eof": True,
                                  "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                                  "fetch.wait.max.ms": 10},
                                 logger=logging.getLogger("mm2gov.librdkafka"))

    def __enter__(self) -> CommittedReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.consumer.close()

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        """(log start, log end) of the partition, asked of the broker (not cached)."""
        try:
            low, high = self.consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=TIMEOUT,
                                                            cached=False)
        except KafkaException as exc:
            raise kafka_failure(self.alias, f"offsets of {topic}[{partition}]", exc) from None
        return low, high

    def partitions(self, topic: str) -> list[int]:
        try:
            metadata = self.consumer.list_topics(topic, timeout=TIMEOUT).topics[topic]
        except KafkaException as exc:
            raise kafka_failure(self.alias, f"metadata of {topic}", exc) from None
        if metadata.error is not None:
            raise RuntimeFailure(f"cluster {self.alias}: metadata of {topic}: {metadata.error.name()}: "
                                 f"{metadata.error.str()}")
        return sorted(metadata.partitions)

    def count(self, topic: str, partition: int, start: int) -> int:
        """Records a read_committed consumer reads from `start` to the partition's end."""
        low, high = self.watermarks(topic, partition)
        if start >= high:  # nothing there; assigning past the end would reset to the start
            return 0
        return sum(1 for _ in self.until_end([TopicPartition(topic, partition, max(start, low))]))

    def read(self, topic: str) -> list[Message]:
        """Every record of the topic, partition by partition, in log order."""
        marks = {p: self.watermarks(topic, p) for p in self.partitions(topic)}
        wanted = [TopicPartition(topic, p, -2) for p, (low, high) in marks.items() if high > low]
        return list(self.until_end(wanted)) if wanted else []

    def until_end(self, partitions: list[TopicPartition]) -> Iterator[Message]:
        """The records of `partitions` from their given offsets to each one's end (as of reaching it)."""
        self.consumer.assign(partitions)
        pending = {(p.topic, p.partition) for p in partitions}
        deadline = time.monotonic() + READ_TIMEOUT
        try:
            while pending:
                if time.monotonic() > deadline:
                    raise RuntimeFailure(f"cluster {self.alias}: timed out reading {sorted(pending)} to its end")
                # consume() returns before its timeout only with a full batch: a short one lets the last
                # partition's EOF end the read at once instead of a second later
                for message in self.consumer.consume(1000, timeout=0.1):
                    error = message.error()
                    if error is None:
                        yield message
                    elif error.code() == KafkaError._PARTITION_EOF:
                        pending.discard((message.topic(), message.partition()))
                    else:
                        raise RuntimeFailure(f"cluster {self.alias}: reading {message.topic()}: "
                                             f"{error.name()}: {error.str()}")
        finally:
            self.consumer.unassign()
