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
    stop_pid,
    tail,
)

DevstackError = ProcessError  # a component of the local stack could not be started or reached

__all__ = [
    "LOOPBACK", "DevstackError", "ManagedProcess", "ProcessError", "ensure_port_free", "free_port",
    "group_members", "pid_alive", "pid_command_line", "port_open", "stop_pid", "tail",
]
