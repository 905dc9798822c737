"""The audit's record scan reads what a read_committed consumer reads, on a real broker.

A transactional producer commits some records, aborts others and leaves a last transaction open.
The scan's window ends at the last stable offset and holds the committed records only: aborted
copies (what a crashed exactly-once MM2 leaves on its target) are not data, and the open
transaction neither stalls the scan nor shows its records.
"""

from __future__ import annotations

import uuid

from confluent_kafka import Producer

from governance.kafka.admin import admin_client, create_topics
from spark_audit.records import offset_window, read_records

COMMITTED, ABORTED, OPEN = 7, 5, 4


def transactional_topic(config: dict, topic: str) -> Producer:
    producer = Producer({**config, "transactional.id": f"audit-records-{topic}"})
    producer.init_transactions(30)
    for batch, count in (("committed", COMMITTED), ("aborted", ABORTED), ("open", OPEN)):
        producer.begin_transaction()
        for i in range(count):
            producer.produce(topic, key=f"{batch}-{i}".encode(), value=f"{batch}-{i}".encode())
        producer.flush(30)
        if batch == "committed":
            producer.commit_transaction(30)
        elif batch == "aborted":
            producer.abort_transaction(30)
    return producer  # the last transaction stays open while the scan runs


def test_the_scan_holds_committed_records_only_and_stops_at_the_last_stable_offset(stack, spark):
    config = stack.kafka["source"].admin_config()
    topic = f"audit-txn-{uuid.uuid4().hex[:6]}"
    create_topics(admin_client(config), [topic])
    producer = transactional_topic(config, topic)
    try:
        window = offset_window(config, {topic: 1}, per_partition=1000)
        start, end = window[topic][0]
        # committed records + their marker + aborted records + their marker: the open batch is past the end
        assert (start, end) == (0, COMMITTED + 1 + ABORTED + 1), window
        rows = read_records(spark, "source", config, window, []).collect()
        assert len(rows) == COMMITTED, [r.offset for r in rows]
        assert sorted(r.offset for r in rows) == list(range(COMMITTED))
    finally:
        producer.abort_transaction(30)
