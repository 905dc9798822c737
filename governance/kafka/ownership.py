"""What mm2gov owns on a cluster: a compacted topic holding the principals it manages.

Apply and drift only ever delete bindings and users of owned principals; every
other binding on the broker belongs to a neighbour and is left alone. The
record is widened (old owned + new desired) before anything changes and
narrowed to the desired principals after, so an apply killed halfway still
knows what to clean up.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from governance.errors import RuntimeFailure
from governance.kafka.admin import create_topics

OWNERSHIP_TOPIC = "mm2gov.ownership"
KEY = b"principals"
log = logging.getLogger("mm2gov.kafka")


def ensure_topic(admin: AdminClient) -> None:
    create_topics(admin, [OWNERSHIP_TOPIC], partitions=1, replication_factor=-1,
                  config={"cleanup.policy": "compact"})


def read_owned(config: dict[str, Any]) -> set[str]:
    """The principals of the last record, or none when the topic is absent or empty."""
    consumer = Consumer({**config, "group.id": f"mm2gov-ownership-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"},
                        logger=logging.getLogger("mm2gov.librdkafka"))
    try:
        metadata = consumer.list_topics(OWNERSHIP_TOPIC, timeout=15)
        topic = metadata.topics.get(OWNERSHIP_TOPIC)
        if topic is None or topic.error is not None:
            return set()
        low, high = consumer.get_watermark_offsets(TopicPartition(OWNERSHIP_TOPIC, 0), timeout=15)
        if high <= low:
            return set()
        consumer.assign([TopicPartition(OWNERSHIP_TOPIC, 0, high - 1)])
        message = None
        for _ in range(30):
            message = consumer.poll(1.0)
            if message is not None:
                break
        if message is None or message.error() is not None:
            raise RuntimeFailure(f"cannot read {OWNERSHIP_TOPIC}: {message.error() if message else 'timed out'}")
        return set(json.loads(message.value())["principals"])
    finally:
        consumer.close()


def write_owned(config: dict[str, Any], principals: set[str]) -> None:
    producer = Producer({**config, "enable.idempotence": True}, logger=logging.getLogger("mm2gov.librdkafka"))
    failures: list[Any] = []
    producer.produce(OWNERSHIP_TOPIC, key=KEY, value=json.dumps({"principals": sorted(principals)}).encode(),
                     on_delivery=lambda err, _msg: err and failures.append(err))
    producer.flush(30)
    if failures:
        raise RuntimeFailure(f"cannot record ownership in {OWNERSHIP_TOPIC}: {failures[0]}")
