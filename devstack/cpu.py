"""CPU time of the local stack's processes and of the whole machine, from /proc: what the benchmarks
print beside their figures (who used the cores during a run)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
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


@dataclass(frozen=True)
class CpuSample:
    """At one moment: the CPU seconds of each side of a bench (its processes, named by the bench), of the
    whole machine, and of the kernel's wait-for-a-core counter (None where it has none)."""

    sides: dict[str, float]
    machine: float
    at: float
    waiting: float | None = None


def sample_cpu(sides: dict[str, float]) -> CpuSample:
    return CpuSample(sides, machine_busy_seconds(), time.monotonic(), cpu_wait_seconds())


def cores_busy(before: CpuSample, after: CpuSample) -> dict[str, float]:
    """Cores each side kept busy between two samples; `other` is every other process on the machine."""
    wall = after.at - before.at
    busy = {side: (after.sides[side] - before.sides[side]) / wall for side in before.sides}
    busy["other"] = max(0.0, (after.machine - before.machine) / wall - sum(busy.values()))
    return busy


def waiting_share(before: CpuSample, after: CpuSample) -> float | None:
    """The share of the time between two samples during which some runnable task waited for a core."""
    if before.waiting is None or after.waiting is None:
        return None
    return (after.waiting - before.waiting) / (after.at - before.at)
