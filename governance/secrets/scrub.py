"""Scrubbing: the last line of defence for secret values that reach text anyway.

Every `SecretValue` made in this process registers its value here. Error messages from
client libraries (librdkafka, the kubernetes client, Java tools' output) and every log record
pass through `scrub()` before they are printed, so a library that echoes a password or a JAAS
line prints `<redacted>` instead.
"""

from __future__ import annotations

import logging
import threading

REDACTED = "<redacted>"
MIN_LENGTH = 6  # shorter values (e.g. user names in the same secret) would redact ordinary words

_known: set[str] = set()
_lock = threading.Lock()


def register(value: str) -> None:
    if len(value) >= MIN_LENGTH:
        with _lock:
            _known.add(value)


def scrub(text: str) -> str:
    if not _known or not text:
        return text
    with _lock:
        values = sorted(_known, key=len, reverse=True)
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


class ScrubFilter(logging.Filter):
    """A handler filter: the formatted message (arguments included) is scrubbed once, in place."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = scrub(message)
        if record.exc_info and record.exc_info[1] is not None:
            cleaned += "\n" + scrub(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
            record.exc_text = None
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        return True
