"""MirrorMaker 2's records in a flow's own topics, parsed as Kafka's classes write them.

`Checkpoint` (connect-mirror-client, checkpoints topic): key = group STRING, topic STRING (the remote topic),
partition INT32; value = version INT16 (0), upstreamOffset INT64, offset INT64 (downstream), metadata STRING.
`OffsetSync` (connect-mirror, offset-syncs topic): key = topic STRING (the source topic), partition INT32;
value = upstreamOffset INT64, offset INT64 (where that upstream record landed on the target).
Kafka's STRING is an INT16 length and UTF-8 bytes. Malformed records raise RecordFormatError.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass


class RecordFormatError(ValueError):
    """Bytes that are not an MM2 checkpoint or offset sync."""


@dataclass(frozen=True)
class Checkpoint:
    group: str
    topic: str  # the remote topic on the target
    partition: int
    upstream: int  # the group's committed offset on the source
    downstream: int  # its translation on the target
    version: int = 0


@dataclass(frozen=True)
class OffsetSync:
    topic: str  # the source topic
    partition: int
    upstream: int  # offset of a source record...
    downstream: int  # ...and of its copy on the target


def _string(data: bytes, at: int) -> tuple[str, int]:
    (length,) = _unpack(">h", data, at)
    end = at + 2 + length
    if length < 0 or end > len(data):
        raise RecordFormatError("string runs past the record")
    return data[at + 2:end].decode("utf-8", errors="replace"), end


def _unpack(layout: str, data: bytes, at: int) -> tuple[int, ...]:
    try:
        return struct.unpack_from(layout, data, at)
    except struct.error as exc:
        raise RecordFormatError(f"record too short: {exc}") from None


def _topic_partition(key: bytes, at: int) -> tuple[str, int, int]:
    topic, at = _string(key, at)
    (partition,) = _unpack(">i", key, at)
    return topic, partition, at + 4


def parse_checkpoint(key: bytes | None, value: bytes | None) -> Checkpoint:
    """A record of a checkpoints topic (version 0, the only one Kafka writes)."""
    if key is None or value is None:
        raise RecordFormatError("checkpoint without key or value")
    group, at = _string(key, 0)
    topic, partition, _ = _topic_partition(key, at)
    version, upstream, downstream = _unpack(">hqq", value, 0)
    if version != 0:
        raise RecordFormatError(f"checkpoint version {version} (only 0 is known)")
    return Checkpoint(group, topic, partition, upstream, downstream, version)


def parse_offset_sync(key: bytes | None, value: bytes | None) -> OffsetSync:
    """A record of an offset-syncs topic."""
    if key is None or value is None:
        raise RecordFormatError("offset sync without key or value")
    topic, partition, _ = _topic_partition(key, 0)
    upstream, downstream = _unpack(">qq", value, 0)
    return OffsetSync(topic, partition, upstream, downstream)

