"""governance/migrate/offsets.py's record format and partitioner, asked of Kafka's own classes.

A seed only resumes a flow if its key bytes are exactly the bytes Connect looks the partition up
by (OffsetStorageReaderImpl serializes the requested partition and matches bytes): jshell builds
each position's key with MirrorUtils.wrapPartition (the map MirrorSourceTask uses) and the
worker's internal JsonConverter (schemas.enable=false), and the partition with the producer's
hash; offsets.py must agree byte for byte, and Connect must read a seed back as MM2 expects.
"""

from __future__ import annotations

import functools

from governance.migrate.offsets import (
    SOURCE_CONNECTOR,
    RawRecord,
    SourcePosition,
    murmur2,
    offsets_partition,
    parse_record,
    seed_record,
)
from tests.integration.test_broker_version_oracle import jshell

POSITIONS = (
    SourcePosition(SOURCE_CONNECTOR, "onprem", "acme.orders", 0, 0),
    SourcePosition(SOURCE_CONNECTOR, "eu-onprem", "pay.payments-v2", 7, 41),
    SourcePosition(SOURCE_CONNECTOR, "a", "t", 2147483647, 9223372036854775807),
    SourcePosition(SOURCE_CONNECTOR, "cloud", "x_y.z-" + "q" * 200, 24, 123456789012),
    SourcePosition(SOURCE_CONNECTOR, "Src.1", "Mixed.Case_Topic", 3, 1),
)
HASHED = (b"", b"a", b"ab", b"abc", b"abcd", b"abcde", b"\xff\x80\x00\x7f\x01", bytes(range(256)))
PARTITION_COUNTS = (1, 25, 50)


def _java_bytes(data: bytes) -> str:
    return "new byte[]{" + ",".join(str(b - 256 if b > 127 else b) for b in data) + "}"


@functools.cache
def kafka_answers() -> dict[str, str]:
    """What Kafka's classes print for POSITIONS and HASHED, by label."""
    lines = [
        "var keys = new org.apache.kafka.connect.json.JsonConverter();",
        'keys.configure(java.util.Map.of("schemas.enable", "false"), true);',
        "var values = new org.apache.kafka.connect.json.JsonConverter();",
        'values.configure(java.util.Map.of("schemas.enable", "false"), false);',
        'var wrap = Class.forName("org.apache.kafka.connect.mirror.MirrorUtils").getDeclaredMethod('
        '"wrapPartition", org.apache.kafka.common.TopicPartition.class, String.class);',
        "wrap.setAccessible(true);",
        'var offset = Class.forName("org.apache.kafka.connect.mirror.MirrorUtils").getDeclaredMethod('
        '"wrapOffset", long.class);',
        "offset.setAccessible(true);",
        "var hex = java.util.HexFormat.of();",
    ]
    for i, p in enumerate(POSITIONS):
        lines += [
            f'var k{i} = keys.fromConnectData("{p.connector}", null, java.util.Arrays.asList("{p.connector}", '
            f'wrap.invoke(null, new org.apache.kafka.common.TopicPartition("{p.topic}", {p.partition}), '
            f'"{p.cluster}")));',
            f'System.out.println("@key{i} " + hex.formatHex(k{i}));',
            f'System.out.println("@value{i} " + hex.formatHex(values.fromConnectData("{p.connector}", null, '
            f'offset.invoke(null, {p.offset}L))));',
        ]
        for count in PARTITION_COUNTS:
            lines.append(f'System.out.println("@partition{i}.{count} " + org.apache.kafka.common.utils.Utils'
                         f'.toPositive(org.apache.kafka.common.utils.Utils.murmur2(k{i})) % {count});')
    for i, data in enumerate(HASHED):
        lines.append(f'System.out.println("@murmur{i} " + org.apache.kafka.common.utils.Utils'
                     f'.murmur2({_java_bytes(data)}));')
    # what Connect reads back from a seed: the offset's Java type is what MirrorUtils.unwrapOffset casts to
    key, value = seed_record(POSITIONS[1])
    lines += [
        f'var readKey = keys.toConnectData("t", {_java_bytes(key)}).value();',
        'System.out.println("@readkey " + readKey);',
        f'var readValue = (java.util.Map) values.toConnectData("t", {_java_bytes(value)}).value();',
        'System.out.println("@readvalue " + readValue.get("offset").getClass().getName() + " " '
        '+ readValue.get("offset"));',
    ]
    return dict(line[1:].split(" ", 1) for line in jshell("\n".join(lines)))


def test_seed_records_are_connects_own_bytes():
    answers = kafka_answers()
    for i, position in enumerate(POSITIONS):
        key, value = seed_record(position)
        assert (key.hex(), value.hex()) == (answers[f"key{i}"], answers[f"value{i}"]), position
        # and what Connect writes parses back to the same position
        written = RawRecord(0, i, bytes.fromhex(answers[f"key{i}"]), bytes.fromhex(answers[f"value{i}"]))
        assert parse_record(written) == position


def test_seed_partition_is_the_producers_own():
    answers = kafka_answers()
    for i, position in enumerate(POSITIONS):
        key, _ = seed_record(position)
        for count in PARTITION_COUNTS:
            assert offsets_partition(key, count) == int(answers[f"partition{i}.{count}"]), (position, count)
    for i, data in enumerate(HASHED):
        assert murmur2(data) == int(answers[f"murmur{i}"]), data


def test_connect_reads_a_seed_as_mirror_source_task_expects():
    answers = kafka_answers()
    position = POSITIONS[1]
    assert answers["readkey"] == (f"[{position.connector}, {{cluster={position.cluster}, "
                                  f"partition={position.partition}, topic={position.topic}}}]")
    assert answers["readvalue"] == f"java.lang.Long {position.offset}"
