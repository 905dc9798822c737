"""Waiting on events, not on the clock: poll a probe until it answers, or fail saying what never came."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
log = logging.getLogger("tests.wait")  # how long each wait took: `pytest --log-cli-level=INFO` shows it


def wait_for(what: str, probe: Callable[[], T], timeout: float, interval: float = 0.25) -> T:
    """The probe's first truthy answer; AssertionError naming `what` once `timeout` seconds have passed."""
    began = time.monotonic()
    deadline = began + timeout
    while True:
        found = probe()
        if found:
            log.info("%.1f s waiting for %s", time.monotonic() - began, what)
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)
