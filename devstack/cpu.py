"""CPU time of the local stack's processes and of the whole machine, from /proc: what the benchmarks
print beside their figures (who used the cores during a run)."""

from __future__ import annotations

import os
from pathlib import Path

from devstack.process import group_members

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU of one process (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def group_cpu_seconds(pid: int) -> float:
    """User + system CPU of the live processes in `pid`'s process group (a JVM and its children)."""
    return sum(process_cpu_seconds(member) for member in group_members(pid) or [pid])


def cpu_wait_seconds() -> float | None:
    """Seconds during which at least one runnable task waited for a core (Linux's pressure stall information,
    the `some` line's total), or None where the kernel does not report it. Over a phase, its share of the
    wall time says how often something that could run did not: the tail latency a saturated machine adds."""
    try:
        line = next(row for row in Path("/proc/pressure/cpu").read_text().splitlines() if row.startswith("some "))
    except (OSError, StopIteration):
        return None
    return int(dict(field.split("=") for field in line.split()[1:])["total"]) / 1e6  # microseconds


def machine_busy_seconds() -> float:
    """CPU time all cores spent not idle (every process, ours and anyone else's)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / CLOCK_TICKS  # user..steal; guest time is already in user
