"""MirrorMaker 2 (dedicated mode) started by the stack replicates a topic, records intact."""

from __future__ import annotations

import time

import javaproperties
from confluent_kafka import Consumer, Producer

from governance.kafka.admin import admin_client, create_topics

RECORDS = [
    (b"order-1", b'{"amount": 10}', [("lob", b"payments"), ("trace", b"\x00\x01")]),
    (b"order-2", b'{"amount": 20}', [("lob", b"payments")]),
    (None, b"no key", []),
]


def test_mm2_replicates_keys_values_and_headers_to_remote_topic(stack, tmp_path):
    source, target = stack.kafka["source"], stack.kafka["target"]
    create_topics(admin_client(source.admin_config()), ["mm2test.orders", "mm2test.other"])
    producer = Producer(source.admin_config())
    for key, value, headers in RECORDS:
        producer.produce("mm2test.orders", key=key, value=value, headers=headers)
    producer.produce("mm2test.other", value=b"must not be replicated")
    assert producer.flush(30) == 0

    properties = stack.write_mm2_properties("mm2test", topics=r"mm2test\.orders")
    text = properties.read_text()
    assert all(secret.reveal() not in text for secret in stack.secrets.values())
    read = javaproperties.loads(text)  # as MM2's java.util.Properties reads it
    for alias in ("source", "target"):  # credentials are config-provider references
        assert 'password="${file:' in read[f"{alias}.sasl.jaas.config"]
        assert read[f"{alias}.ssl.truststore.password"].startswith("${file:")
    stack.start_mirrormaker("mm2test", properties)
    try:
        received = _consume(target.admin_config(), "source.mm2test.orders", len(RECORDS), timeout=120)
        topics = admin_client(target.admin_config()).list_topics(timeout=10).topics
    finally:
        stack.stop_mirrormaker("mm2test")

    assert [(m.key(), m.value(), m.headers() or []) for m in received] == [
        (k, v, h) for k, v, h in RECORDS
    ]
    assert "source.mm2test.orders" in topics
    assert "source.mm2test.other" not in topics and "mm2test.orders" not in topics


def _consume(config: dict, topic: str, count: int, timeout: float) -> list:
    consumer = Consumer({**config, "group.id": f"verify-{topic}", "auto.offset.reset": "earliest",
                         "log_level": 0, "topic.metadata.refresh.interval.ms": 2000})
    consumer.subscribe([topic])
    received = []
    deadline = time.monotonic() + timeout
    try:
        while len(received) < count and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                received.append(message)
    finally:
        consumer.close()
    return received
