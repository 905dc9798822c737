"""Managed subprocesses of the local stack: `governance.process`, re-exported under the names the stack uses."""

from __future__ import annotations

from governance.process import (
    LOOPBACK,
    ManagedProcess,
    ProcessError,
    ensure_port_free,
    free_port,
    group_members,
    pid_alive,
    pid_command_line,
    port_open,
    start_on_free_port,
    stop_pid,
    tail,
)

DevstackError = ProcessError  # a component of the local stack could not be started or reached

# The stack's JVMs carry little data and live minutes: the JIT's quick tier (no C2 compiler threads) and one
# GC thread cost the least CPU on a 2-core machine, and change nothing of what the programs do.
QUICK_JVM = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")

__all__ = [
    "LOOPBACK", "QUICK_JVM", "DevstackError", "ManagedProcess", "ProcessError", "ensure_port_free", "free_port",
    "group_members", "pid_alive", "pid_command_line", "port_open", "start_on_free_port", "stop_pid", "tail",
]
