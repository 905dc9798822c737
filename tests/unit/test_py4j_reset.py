"""A py4j call interrupted in flight (as pytest-timeout does) leaves the JVM's answer on this thread's
connection; tests/tools/py4j_reset.py drops it, so the worker's shared SparkSession answers again."""

from __future__ import annotations

import signal
import time
from typing import Any

import pytest

from tests.tools.py4j_reset import drop_thread_connection

pytestmark = pytest.mark.integration  # starts the worker's Spark driver


class _Interrupted(BaseException):
    """What pytest-timeout raises into the main thread: not an Exception, so py4j lets it through."""


def _interrupt(signum: int, frame: object) -> None:
    raise _Interrupted


def _abs_of_minus_three(jvm: Any) -> object:
    """Math.abs(-3) as the JVM answers this thread, or the error py4j raised instead."""
    from py4j.protocol import Py4JError

    try:
        return jvm.java.lang.Math.abs(-3)
    except Py4JError as error:
        return error


def test_an_interrupted_call_leaves_its_answer_behind_until_the_connection_is_dropped(spark: Any) -> None:
    jvm = spark.sparkContext._jvm
    assert _abs_of_minus_three(jvm) == 3
    previous = signal.signal(signal.SIGALRM, _interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(_Interrupted) as interrupted:  # pytest keeps a failure's traceback as long, and
            jvm.java.lang.Thread.sleep(1500)              # its frames keep py4j's (weakly held) connection
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    time.sleep(2)  # the JVM has answered the interrupted sleep by now, on this thread's connection
    assert _abs_of_minus_three(jvm) != 3  # what every later test saw: the answer to the command before

    assert drop_thread_connection()
    assert _abs_of_minus_three(jvm) == 3
    assert spark.range(5).count() == 5
    assert interrupted.type is _Interrupted


def test_nothing_to_drop_on_a_fresh_connection_twice(spark: Any) -> None:
    assert spark.range(1).count() == 1
    assert drop_thread_connection()
    assert not drop_thread_connection()  # already closed: a no-op
    assert spark.range(2).count() == 2
