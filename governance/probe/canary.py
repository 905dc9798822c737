"""A canary record: written by a probe to one partition of the tenant's probe topic on the source, read
back from the flow's remote topic on the target.

The value is small JSON naming the probe run, the source partition it was written to and its sequence
number there, and when it was sent. A run id (random per run) keeps a run's canaries apart from an
earlier run's, and from anything else written to the probe topic: the topic sits inside the tenant's
prefix, so the tenant's own principals may write to it, and a record that is not this run's canary is
counted apart, never taken as one (a tenant cannot hide a loss by writing fake canaries without the id).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

FORMAT = "mm2gov-probe/1"


@dataclass(frozen=True, order=True)
class Canary:
    run: str
    partition: int  # the source partition it was written to
    seq: int  # its number among this run's canaries of that partition, from 0
    sent_ms: int  # the probe's clock when it handed the record to the producer

    def encode(self) -> bytes:
        return json.dumps({"format": FORMAT, "run": self.run, "partition": self.partition, "seq": self.seq,
                           "sent_ms": self.sent_ms}, separators=(",", ":")).encode()


def decode(value: bytes | None) -> Canary | None:
    """The canary in a record's value, or None when the value is not one (anything else in the topic)."""
    if value is None or len(value) > 1024:
        return None
    try:
        data = json.loads(value)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    run, partition, seq, sent_ms = (data.get(key) for key in ("run", "partition", "seq", "sent_ms"))
    if not isinstance(run, str) or not all(_natural(v) for v in (partition, seq, sent_ms)):
        return None
    return Canary(run, partition, seq, sent_ms)


def _natural(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True)
class Received:
    """One record read back on the target: where it landed and when the probe saw it."""

    partition: int  # the target partition
    offset: int
    value: bytes | None
    received_ms: int
