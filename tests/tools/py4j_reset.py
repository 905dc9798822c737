"""A fresh py4j connection for this thread after a test failed, so one interrupted Spark call cannot fail
every later test of the worker's shared SparkSession.

Why: pytest-timeout interrupts a test by raising in the main thread. When that lands inside a py4j call,
py4j neither closes nor returns the thread's connection (it only handles its own network errors), so the
JVM's answer to the interrupted command stays unread on it, and every later command of this thread reads
the answer to the one before (CI, 2026-11-28: test_migrate's setup timed out during its audit, and the
next 87 Spark tests failed with answers such as `ClassNotFoundException: ...SparkSession$setActiveSession`
to `read`). Closing the connection drops the stale answer; py4j opens a new one on the next call.
"""

from __future__ import annotations

import sys


def drop_thread_connection() -> bool:
    """Close this thread's py4j connection to a running Spark driver, if there is one; True if closed."""
    if "pyspark" not in sys.modules:  # never started here: nothing to drop (and no import of pyspark)
        return False
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    get_connection = getattr(getattr(gateway, "_gateway_client", None), "get_thread_connection", None)
    connection = get_connection() if get_connection else None  # pinned-thread mode's ClientServer only
    if connection is None or connection.socket is None:
        return False
    connection.close()
    return True
