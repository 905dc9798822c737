"""Benchmark: cold and warm start of each local-stack component, and the stack's peak memory.

cold = a fresh run directory (new CA, KRaft storage formatted, etcd empty, CRDs created);
warm = the same run directory started again (storage and etcd data kept).
Peak memory is the largest sum of resident memory (RSS) of every stack process,
sampled every 200 ms from the first start to the last stop, MirrorMaker 2 included.

Usage: python bench/devstack.py [--rounds N]   (targets: warm start < 60 s, peak < 4 GiB on 2 cores)
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


def one_start(run_dir: Path, sampler_ref: list[Stack]) -> dict[str, float]:
    stack = Stack(StackSpec(run_dir=run_dir))
    sampler_ref[:] = [stack]
    began = time.monotonic()
    stack.up()
    figures = {"stack (parallel)": time.monotonic() - began, **stack.start_seconds}
    try:
        create_topics(admin_client(stack.kafka["source"].admin_config()), ["bench.orders"])
        properties = stack.write_mm2_properties("bench", topics=r"bench\.orders")
        began = time.monotonic()
        stack.start_mirrormaker("bench", properties)
        figures["mirrormaker2"] = time.monotonic() - began
    finally:
        began = time.monotonic()
        stack.down()
        figures["stop (all)"] = time.monotonic() - began
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1, help="warm starts to average (default 1)")
    args = parser.parse_args()
    sampler_ref: list[Stack] = []
    sampler = MemorySampler(sampler_ref)
    sampler.start()
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-") as tmp:
        run_dir = Path(tmp) / "stack"
        print("cold start (fresh run directory)...", flush=True)
        cold = one_start(run_dir, sampler_ref)
        warm_rounds = []
        for i in range(args.rounds):
            print(f"warm start {i + 1}/{args.rounds} (same run directory)...", flush=True)
            warm_rounds.append(one_start(run_dir, sampler_ref))
    sampler.stopping.set()
    sampler.join()
    warm = {key: statistics.mean(r[key] for r in warm_rounds) for key in warm_rounds[0]}
    print(f"\n{'component':<20}{'cold s':>10}{'warm s':>10}")
    for key in cold:
        print(f"{key:<20}{cold[key]:>10.1f}{warm.get(key, float('nan')):>10.1f}")
    total_warm = warm["stack (parallel)"] + warm["mirrormaker2"]
    print(f"\nwarm start, whole stack incl. MM2: {total_warm:.1f} s (target < 60 s)")
    print(f"peak memory of the whole stack:    {sampler.peak / 2**30:.2f} GiB (target < 4 GiB)")


if __name__ == "__main__":
    main()
