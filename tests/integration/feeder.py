"""A paced producer of sequence-numbered records for the real-MM2 tests that count every copy (exactly-once,
version upgrade, migration): each tenant's values are `<tenant>-<n>`, n from 0, round-robin over partitions."""

from __future__ import annotations

import threading
import time
from typing import Any

from confluent_kafka import Producer


def value(tenant: str, i: int) -> bytes:
    return f"{tenant}-{i:07d}".encode()


class Feeder(threading.Thread):
    """Writes `batch` records per tenant topic, then sleeps `pace` s, until `records` per topic (None: until
    `halt`). `produced` counts the records per topic acknowledged so far; an error ends it into `error`."""

    def __init__(self, config: dict[str, Any], topics: dict[str, str], *, partitions: int, batch: int, pace: float,
                 records: int | None = None, **settings: Any) -> None:
        super().__init__(daemon=True)
        self.config, self.topics = {**config, "acks": "all", "linger.ms": 20, **settings}, topics
        self.partitions, self.batch, self.pace, self.records = partitions, batch, pace, records
        self.produced = 0
        self.halt = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            producer = Producer(self.config)
            while not self.halt.is_set() and (self.records is None or self.produced < self.records):
                end = self.produced + self.batch if self.records is None else min(self.produced + self.batch,
                                                                                  self.records)
                for tenant, topic in self.topics.items():
                    for i in range(self.produced, end):
                        producer.produce(topic, value=value(tenant, i), partition=i % self.partitions)
                        producer.poll(0)
                assert producer.flush(60) == 0, "records left unsent"
                self.produced = end
                time.sleep(self.pace)
        except BaseException as exc:  # noqa: BLE001 - re-raised by the test through `error`
            self.error = exc
