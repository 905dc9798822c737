"""Per-file rendering and writing spread over the machine's cores: the same files, sooner.

No generated file depends on what rendering another one computes, so `generate` renders and writes them
(compile.write) in forked worker processes, one per core (at most MAX_WORKERS), when there are enough of them
for the processes to pay for themselves (MIN_ITEMS). Fork, not spawn: a worker inherits the resolved tenancy
and the rendering functions as they are in memory, and only the items (file numbers) and small results cross
a pipe. The items go out in small chunks, taken by whichever worker is free, so a run of costly files (the
rule tests) does not leave one core idle. Where fork is not offered or there is one core, and for small
estates, everything runs in this process. The results are in the items' order either way, so the files are
the same bytes (tests/unit/test_fanout.py).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")
MIN_ITEMS = 200  # fewer: starting the workers (tens of milliseconds) costs more than it saves
MAX_WORKERS = 4
_function: Callable[[Any], Any] | None = None  # what the forked workers call: inherited by fork, never pickled


def _call(item: Any) -> Any:
    assert _function is not None, "set by fan_out before the workers fork"
    return _function(item)


def workers() -> int:
    """The worker processes fan_out may start: the cores this process may run on, 1 without fork."""
    if "fork" not in multiprocessing.get_all_start_methods() or not hasattr(os, "sched_getaffinity"):
        return 1
    return min(len(os.sched_getaffinity(0)), MAX_WORKERS)


def fan_out(function: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """`[function(item) for item in items]`, in forked workers when there are at least MIN_ITEMS items and
    more than one core. `function` may be a closure (it is inherited, not pickled); items and results are
    pickled, so keep items small (names, numbers)."""
    count = workers()
    if count < 2 or len(items) < MIN_ITEMS:
        return [function(item) for item in items]
    global _function
    _function = function
    try:
        with multiprocessing.get_context("fork").Pool(count) as pool:
            return cast("list[R]", pool.map(_call, items, chunksize=max(1, len(items) // (16 * count))))
    finally:
        _function = None
