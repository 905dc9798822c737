"""MirrorSourceConnector's Connect offset records, as MM2 (dedicated mode) keeps them on the target.

Connect stores a source task's offsets in the worker's offsets topic with its internal converter,
`JsonConverter` with `schemas.enable=false` (Kafka 3.x and 4.x alike):

- key:   `["<connector>",{<source partition>}]`; MirrorSourceTask's source partition is
         `MirrorUtils.wrapPartition`: `{"cluster":<source alias>,"partition":<n>,"topic":<topic>}`,
         its keys in `java.util.HashMap` iteration order (cluster, partition, topic);
- value: `{"offset":<n>}` (`MirrorUtils.wrapOffset`): the source offset of the last record
         replicated; the task resumes at `offset + 1`. A null value is a tombstone.

Connect finds a partition's offset by the *bytes* of its serialized key, so a seed must be
byte-identical to what Connect writes: `seed_record` produces exactly that (tests/integration/
test_migrate_oracle.py checks it against Kafka's own JsonConverter).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

SOURCE_CONNECTOR = "MirrorSourceConnector"  # MirrorMakerConfig: a connector is named by its class's simple name
# What seed_record writes verbatim: names Jackson and Python's json encode identically (no escapes).
_PLAIN = re.compile(r"^[A-Za-z0-9._-]+$")


class OffsetRecordError(ValueError):
    """A record of the offsets topic that is not what Connect writes; names the record's offset."""


@dataclass(frozen=True, order=True)
class SourceKey:
    connector: str
    cluster: str
    topic: str
    partition: int


@dataclass(frozen=True, order=True)
class SourcePosition:
    """A source topic-partition's position as MM2 committed it: `offset` is the last record replicated."""

    connector: str
    cluster: str
    topic: str
    partition: int
    offset: int

    @property
    def key(self) -> SourceKey:
        return SourceKey(self.connector, self.cluster, self.topic, self.partition)

    @property
    def resumes_at(self) -> int:
        """The first source offset MirrorSourceTask reads after a restart (`initializeConsumer`: offset + 1)."""
        return self.offset + 1


@dataclass(frozen=True)
class Tombstone:
    key: SourceKey


@dataclass(frozen=True)
class RawRecord:
    """One record of the offsets topic as a consumer reads it (`offset` is the record's own offset)."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json(data: bytes, what: str, where: str) -> object:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise OffsetRecordError(f"{where}: {what} is not JSON ({exc.__class__.__name__})") from None


def parse_record(record: RawRecord, connector_name: str = SOURCE_CONNECTOR) -> SourcePosition | Tombstone | None:
    """The record's MirrorSourceConnector position, a tombstone for one, or None for another
    connector's record (MirrorCheckpointConnector and MirrorHeartbeatConnector share the topic).
    `connector_name`: the source connector's name, MM2's own in dedicated mode."""
    where = f"offsets record {record.partition}@{record.offset}"
    if record.key is None:
        raise OffsetRecordError(f"{where}: no key")
    key = _json(record.key, "key", where)
    if not (isinstance(key, list) and len(key) == 2 and isinstance(key[0], str)):
        raise OffsetRecordError(f"{where}: key is not [connector, partition]")
    connector, wrapped = key
    if connector != connector_name:
        return None
    if not (isinstance(wrapped, dict) and set(wrapped) == {"cluster", "topic", "partition"}
            and isinstance(wrapped["cluster"], str) and isinstance(wrapped["topic"], str)
            and _is_int(wrapped["partition"]) and wrapped["partition"] >= 0):
        raise OffsetRecordError(f"{where}: key's source partition is not {{cluster, topic, partition}}")
    source = SourceKey(connector, wrapped["cluster"], wrapped["topic"], wrapped["partition"])
    if record.value is None:
        return Tombstone(source)
    value = _json(record.value, "value", where)
    if not (isinstance(value, dict) and set(value) == {"offset"} and _is_int(value["offset"])
            and value["offset"] >= 0):
        raise OffsetRecordError(f"{where}: value is not {{\"offset\": <n >= 0>}}")
    return SourcePosition(connector, source.cluster, source.topic, source.partition, value["offset"])


def latest_positions(records: Iterable[RawRecord],
                     connector_name: str = SOURCE_CONNECTOR) -> dict[SourceKey, SourcePosition]:
    """The positions Connect's store would hold after reading `records` in order: the latest
    record per key wins and a tombstone removes the key (KafkaOffsetBackingStore)."""
    held: dict[SourceKey, SourcePosition] = {}
    for record in records:
        parsed = parse_record(record, connector_name)
        if isinstance(parsed, SourcePosition):
            held[parsed.key] = parsed
        elif isinstance(parsed, Tombstone):
            held.pop(parsed.key, None)
    return held


def seed_record(position: SourcePosition) -> tuple[bytes, bytes]:
    """(key, value) exactly as Connect's JsonConverter (schemas.enable=false) serializes them."""
    for name in (position.connector, position.cluster, position.topic):
        if not _PLAIN.match(name):
            raise ValueError(f"'{name}' is not a plain Kafka name ([A-Za-z0-9._-]); refusing to write it")
    if position.partition < 0 or position.offset < 0:
        raise ValueError("a partition and an offset are never negative")
    wrapped = {"cluster": position.cluster, "partition": position.partition, "topic": position.topic}
    key = json.dumps([position.connector, wrapped], separators=(",", ":"))
    value = json.dumps({"offset": position.offset}, separators=(",", ":"))
    return key.encode("utf-8"), value.encode("utf-8")


def murmur2(data: bytes) -> int:
    """Kafka's `Utils.murmur2` (signed 32-bit result), which the producer's partitioner hashes keys with."""
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail = data[length - length % 4:]
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def offsets_partition(key: bytes, partitions: int) -> int:
    """The partition of the offsets topic Connect's producer sends `key` to (default partitioner:
    `toPositive(murmur2(key)) % partitions`), so a seed and Connect's own later writes of the same
    key share a partition and their order, hence "latest wins", is kept."""
    if partitions <= 0:
        raise ValueError("an offsets topic has at least one partition")
    return (murmur2(key) & 0x7FFFFFFF) % partitions
