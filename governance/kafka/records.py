"""Producing and reading records with confluent-kafka: used by the demo, tests and the audit's checks."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, Producer

from governance.errors import RuntimeFailure

Headers = list[tuple[str, bytes]]


@dataclass(frozen=True)
class Record:
    key: bytes | None
    value: bytes | None
    headers: Headers = field(default_factory=list)


@dataclass
class ReadResult:
    records: list[Record]
    error: KafkaError | None  # the first error the broker returned, e.g. TOPIC_AUTHORIZATION_FAILED


def produce(config: dict[str, Any], topic: str, records: Iterable[Record], timeout: float = 30) -> None:
    failures: list[KafkaError] = []
    producer = Producer({**config, "message.timeout.ms": int(timeout * 1000)},
                        logger=logging.getLogger("mm2gov.librdkafka"))
    for record in records:
        producer.produce(topic, key=record.key, value=record.value, headers=record.headers,
                         on_delivery=lambda err, _msg: err and failures.append(err))
    producer.flush(timeout)
    if failures:
        raise RuntimeFailure(f"producing to {topic}: {failures[0].name()}: {failures[0].str()}")


def read(config: dict[str, Any], topic: str, max_records: int, timeout: float = 60,
         group: str | None = None) -> ReadResult:
    """Read up to `max_records` from the start of `topic`; stop early at the first broker error."""
    consumer = Consumer({**config, "group.id": group or f"mm2gov-read-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "topic.metadata.refresh.interval.ms": 2000},
                        logger=logging.getLogger("mm2gov.librdkafka"))
    consumer.subscribe([topic])
    records: list[Record] = []
    deadline = time.monotonic() + timeout
    try:
        while len(records) < max_records and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            error = message.error()
            if error is None:
                records.append(Record(message.key(), message.value(), list(message.headers() or [])))
            elif error.code() != KafkaError.UNKNOWN_TOPIC_OR_PART:  # not created yet: keep waiting
                return ReadResult(records, error)
    finally:
        consumer.close()
    return ReadResult(records, None)
