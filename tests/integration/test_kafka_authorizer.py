"""The real broker's StandardAuthorizer decides: a tenant reaches its own prefix only.

Names are this module's own (acct., mkt.): the session stack is shared with other modules.
"""

from __future__ import annotations

import re
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer

from governance.kafka.admin import admin_client, create_acls, create_topics, upsert_scram_user
from governance.model.acl import AclBinding
from governance.secrets.values import random_password


def _first_message_or_error(consumer: Consumer, timeout: float = 45):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = consumer.poll(1.0)
        if message is None:
            continue
        return message
    return None


@pytest.fixture(scope="module")
def acct_tenant(stack):
    source = stack.kafka["source"]
    admin = admin_client(source.admin_config())
    create_topics(admin, ["acct.orders", "mkt.leads"])
    password = random_password()
    upsert_scram_user(admin, "acct-app", password)
    create_acls(admin, [
        AclBinding("User:acct-app", "TOPIC", "acct.", "PREFIXED", "READ"),
        AclBinding("User:acct-app", "GROUP", "acct-", "PREFIXED", "READ"),
    ])
    producer = Producer(source.admin_config())
    for topic in ("acct.orders", "mkt.leads"):
        producer.produce(topic, key=b"k", value=f"record of {topic}".encode())
    assert producer.flush(30) == 0
    return source.client_config("acct-app", password)


def _consumer(config: dict, group: str) -> Consumer:
    return Consumer({**config, "group.id": group, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "log_level": 0})


def test_tenant_consumes_its_own_prefixed_topic(acct_tenant):
    consumer = _consumer(acct_tenant, f"acct-{uuid.uuid4().hex[:6]}")
    consumer.subscribe(["acct.orders"])
    try:
        message = _first_message_or_error(consumer)
    finally:
        consumer.close()
    assert message is not None and message.error() is None, message and message.error()
    assert message.value() == b"record of acct.orders"


def test_tenant_is_refused_another_tenants_topic(acct_tenant):
    consumer = _consumer(acct_tenant, f"acct-{uuid.uuid4().hex[:6]}")
    consumer.subscribe(["mkt.leads"])
    try:
        message = _first_message_or_error(consumer)
    finally:
        consumer.close()
    assert message is not None and message.error() is not None
    assert message.error().code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_tenant_cannot_write_with_a_read_only_acl(acct_tenant):
    errors = []
    producer = Producer({**acct_tenant, "log_level": 0, "message.timeout.ms": 15000})
    producer.produce("acct.orders", value=b"x", on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(30)
    assert errors and errors[0] is not None
    assert errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_wrong_password_is_refused(stack):
    source = stack.kafka["source"]
    errors: list[KafkaError] = []
    config = {**source.client_config("acct-app", random_password()), "log_level": 0,
              "error_cb": errors.append}
    producer = Producer(config)
    deadline = time.monotonic() + 30
    while not errors and time.monotonic() < deadline:
        producer.poll(0.5)
    assert errors, "the broker accepted a wrong SCRAM password"
    assert errors[0].code() == KafkaError._AUTHENTICATION


def test_the_broker_accepts_exactly_the_topic_names_a_topic_prefix_may_hold(stack):
    """schema.TopicPrefix claims Kafka's own rule for topic names: the real broker is asked (CreateTopics with
    validate_only, nothing is created) about a name with each printable ASCII character, a non-ASCII letter,
    and the longest names; it must accept exactly what the pattern allows."""
    from confluent_kafka.admin import NewTopic

    from governance.config.schema import TopicPrefix

    pattern = re.compile(TopicPrefix.__metadata__[0].pattern)
    names = [f"vb{c}x" for c in map(chr, range(0x21, 0x7F))] + ["vb\u00e9x", "vb x", "v" * 249, "v" * 250]
    admin = admin_client(stack.kafka["source"].admin_config())
    futures = admin.create_topics([NewTopic(n, 1, 1) for n in names], validate_only=True, request_timeout=30)
    accepted = set()
    for name, future in futures.items():
        try:
            future.result(timeout=60)
            accepted.add(name)
        except KafkaException as exc:
            assert exc.args[0].name() == "TOPIC_EXCEPTION" and "Topic name is invalid" in str(exc), (name, exc)
    assert accepted == {n for n in names if pattern.fullmatch(n)}
    assert len(accepted) == 26 * 2 + 10 + 3 + 1  # letters, digits, '.', '_', '-', and 249 characters
