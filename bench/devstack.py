"""Benchmark: cold and warm start of each local-stack component, and the stack's peak memory.

cold = a fresh run directory (new CA, KRaft storage formatted, etcd empty, CRDs created);
warm = the same run directory started again (storage and etcd data kept).
Peak memory is the largest sum of resident memory (RSS) of every stack process,
sampled every 200 ms from the first start to the last stop, MirrorMaker 2 included.
Idle CPU: with the stack started (before MM2) and nothing asked of it, each component's CPU (its process
group) over `--idle-seconds`, in ms per second, in every round; then one more warm round with the brokers on Kafka's own
`metadata.max.idle.interval.ms` (a no-op record in the metadata log every 500 ms; the stack sets 0): the
reference for the brokers' idle figure, measured in the same run.

Usage: python bench/devstack.py [--rounds N] [--idle-seconds S]
       (targets: warm start < 60 s, peak < 4 GiB on 2 cores)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])  # the repo, not bench/ (bench/secrets.py: stdlib name)

from devstack.cpu import group_cpu_seconds  # noqa: E402
from devstack.process import group_members  # noqa: E402
from devstack.stack import Stack, StackSpec  # noqa: E402
from governance.kafka.admin import admin_client, create_topics  # noqa: E402


def rss_bytes(pids: list[int]) -> int:
    total = 0
    for leader in pids:
        for pid in group_members(leader):
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            except OSError:
                continue
    return total


class MemorySampler(threading.Thread):
    def __init__(self, stack_ref: list[Stack]) -> None:
        super().__init__(daemon=True)
        self.stack_ref = stack_ref
        self.peak = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            if self.stack_ref:
                pids = list(self.stack_ref[0]._pids().values())
                self.peak = max(self.peak, rss_bytes(pids))
            self.stopping.wait(0.2)


KAFKA_NOOP_DEFAULT = {"metadata.max.idle.interval.ms": "500"}  # Kafka's default, the reference


def idle_cpu(stack: Stack, seconds: float) -> dict[str, float]:
    """Each component's CPU, ms per second, over `seconds` with nothing asked of the stack."""
    pids = stack._pids()
    before, began = {name: group_cpu_seconds(pid) for name, pid in pids.items()}, time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - began
    return {name: 1000 * (group_cpu_seconds(pid) - before[name]) / wall for name, pid in pids.items()}


def one_start(run_dir: Path, sampler_ref: list[Stack], idle_seconds: float,
              kafka_properties: dict[str, str] | None = None) -> tuple[dict[str, float], dict[str, float]]:
    stack = Stack(StackSpec(run_dir=run_dir, kafka_properties=kafka_properties or {}))
    sampler_ref[:] = [stack]
    began = time.monotonic()
    stack.up()
    figures = {"stack (parallel)": time.monotonic() - began, **stack.start_seconds}
    try:
        create_topics(admin_client(stack.kafka["source"].admin_config()), ["bench.orders"])
        time.sleep(5)  # the start-up work done
        idle = idle_cpu(stack, idle_seconds)
        properties = stack.write_mm2_properties("bench", topics=r"bench\.orders")
        began = time.monotonic()
        stack.start_mirrormaker("bench", properties)
        figures["mirrormaker2"] = time.monotonic() - began
    finally:
        began = time.monotonic()
        stack.down()
        figures["stop (all)"] = time.monotonic() - began
    return figures, idle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1, help="warm starts to average (default 1)")
    parser.add_argument("--idle-seconds", type=float, default=30, help="idle CPU measured over (default 30)")
    args = parser.parse_args()
    sampler_ref: list[Stack] = []
    sampler = MemorySampler(sampler_ref)
    sampler.start()
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-") as tmp:
        run_dir = Path(tmp) / "stack"
        print("cold start (fresh run directory)...", flush=True)
        cold, _ = one_start(run_dir, sampler_ref, args.idle_seconds)
        warm_rounds, idle_rounds = [], []
        for i in range(args.rounds):
            print(f"warm start {i + 1}/{args.rounds} (same run directory)...", flush=True)
            figures, idle = one_start(run_dir, sampler_ref, args.idle_seconds)
            warm_rounds.append(figures)
            idle_rounds.append(idle)
        print("warm start, brokers on Kafka's metadata.max.idle.interval.ms (the reference)...", flush=True)
        _, reference = one_start(run_dir, sampler_ref, args.idle_seconds, KAFKA_NOOP_DEFAULT)
    sampler.stopping.set()
    sampler.join()
    warm = {key: statistics.mean(r[key] for r in warm_rounds) for key in warm_rounds[0]}
    print(f"\n{'component':<20}{'cold s':>10}{'warm s':>10}")
    for key in cold:
        print(f"{key:<20}{cold[key]:>10.1f}{warm.get(key, float('nan')):>10.1f}")
    total_warm = warm["stack (parallel)"] + warm["mirrormaker2"]
    print(f"\nwarm start, whole stack incl. MM2: {total_warm:.1f} s (target < 60 s)")
    print(f"peak memory of the whole stack:    {sampler.peak / 2**30:.2f} GiB (target < 4 GiB)")
    idle = {name: statistics.mean(r[name] for r in idle_rounds) for name in idle_rounds[0]}
    print(f"\nidle CPU over {args.idle_seconds:g} s, ms per second (warm rounds; reference: brokers with Kafka's "
          "no-op metadata records):")
    for name in sorted(idle):
        shown = f"   reference {reference[name]:6.1f}" if name.startswith("kafka") else ""
        print(f"  {name:<24}{idle[name]:6.1f}{shown}")


if __name__ == "__main__":
    main()
