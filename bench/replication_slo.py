"""Benchmark: one flow's replication SLO at increasing producer rates, the probe beside MM2's own metric.

On the local stack's two Kafka clusters (SASL_SSL, SCRAM, StandardAuthorizer) one tenant has one
at-least-once flow with an `slo` (`mm2gov apply` grants, `mm2gov generate` writes the MM2 file and its JMX
exporter config), run by a dedicated MirrorMaker 2 with the exporter agent. Then, per offered rate (doubling
from `--start-rate` until the flow saturates or `--max-rate`), for `--seconds`:

- a producer writes records of `--value-bytes` to the tenant's topic (`--partitions`) at the offered rate,
  in 10 ms slices;
- the probe (`governance.probe`, as `mm2gov probe` runs it: the tenant's probe user, canaries to every
  partition of its probe topic, read back on the target) runs back to back;
- a consumer on the target counts the flow's records and takes each one's end-to-end latency (arrival minus
  its CreateTime, which MM2 keeps): the reference the probe's latency is compared with;
- MM2's `replication-latency-ms` (its JMX exporter's /metrics, the flow's topic partitions) is sampled.

Printed per rate: records/s offered, written and delivered on the target, the target's lag when the
producer stopped, the probe's end-to-end latency p50/p99 (and its lost/duplicated canaries), the records'
own latency p50/p99, MM2's replication-latency-ms (mean of the partitions' averages, and the max), and the
probe's own load (canaries/s beside the flow's records/s). A rate is saturated when the target delivered
under 90% of what was written in the window. The machine's cores are shared: the figures say what this run
measured, nothing more.

Usage: python bench/replication_slo.py [--start-rate 1000] [--max-rate 64000] [--seconds 20] [--partitions 6]
       [--value-bytes 512] [--format json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

import yaml  # noqa: E402
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from devstack.repo import tenant_document  # noqa: E402
from devstack.stack import Stack, StackSpec  # noqa: E402
from governance.compile.monitoring.common import METRIC_PREFIX  # noqa: E402
from governance.config import load_inventory  # noqa: E402
from governance.kafka.admin import admin_client, create_topics  # noqa: E402
from governance.model.names import flow_id, remote_name  # noqa: E402
from governance.policy.decide import decide  # noqa: E402
from governance.probe.assess import assess, percentile  # noqa: E402
from governance.probe.live import ensure_topic, probe_configs, probe_flows, probe_once  # noqa: E402
from governance.secrets.store import DirSecretStore  # noqa: E402

SOURCE, TARGET, TENANT = "source", "target", "benchslo"
TOPIC = f"{TENANT}.orders"
SATURATED = 0.9  # delivered / written in the window below this: the flow does not keep up
LATENCY_METRIC = METRIC_PREFIX + "replication_latency_ms"  # `_avg` and `_max`, per topic partition


def cli(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "governance", "--log-level", "warning", *args],
                          capture_output=True, text=True, cwd=REPO_ROOT)
    if done.returncode != 0:
        raise SystemExit(f"mm2gov {args[0]} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def governed_flow(stack: Stack, root: Path, secrets: Path) -> tuple[Path, Path, Path]:
    """The tenant with one slo flow, applied and generated: (repo, its MM2 file, its JMX exporter config)."""
    repo, out = root / "repo", root / "out"
    (repo / "tenants").mkdir(parents=True)
    (repo / "clusters.yaml").write_text(stack.governance_clusters())
    tenant = tenant_document(TENANT, SOURCE, TARGET)
    tenant["flows"][0]["slo"] = {"latency_p99_ms": 10_000}
    (repo / "tenants" / f"{TENANT}.yaml").write_text(yaml.safe_dump(tenant, sort_keys=False))
    cli("apply", str(repo), "--secrets-dir", str(secrets))
    cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
    flow = flow_id(TENANT, SOURCE, TARGET)
    return repo, out / "mm2" / f"{flow}.properties", out / "monitoring" / "jmx" / f"{TENANT}.yaml"


# -- the three sides of one step ---------------------------------------------------------------


class Writer(threading.Thread):
    """`rate` records/s to TOPIC for `seconds`, produced in 10 ms slices; counts what was acknowledged."""

    def __init__(self, config: dict[str, Any], rate: int, seconds: float, partitions: int, value: bytes) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({**config, "linger.ms": 5, "acks": "all", "queue.buffering.max.messages": 1_000_000})
        self.rate, self.seconds, self.partitions, self.value = rate, seconds, partitions, value
        self.acked = 0
        self.failed = 0

    def _report(self, error: Any, _message: Any) -> None:
        if error is None:
            self.acked += 1
        else:
            self.failed += 1

    def run(self) -> None:
        began = time.monotonic()
        sent = 0
        while (elapsed := time.monotonic() - began) < self.seconds:
            due = int(self.rate * min(elapsed + 0.01, self.seconds))
            while sent < due:
                try:
                    self.producer.produce(TOPIC, self.value, partition=sent % self.partitions,
                                          on_delivery=self._report)
                except BufferError:
                    self.producer.poll(0.05)
                    continue
                sent += 1
            self.producer.poll(0)
            time.sleep(max(0.0, began + elapsed + 0.01 - time.monotonic()))
        self.producer.flush(120)


class Arrivals(threading.Thread):
    """Counts the flow's records on the target from `start` offsets, with each one's end-to-end latency."""

    def __init__(self, config: dict[str, Any], topic: str, start: dict[int, int]) -> None:
        super().__init__(daemon=True)
        self.consumer = Consumer({**config, "group.id": f"bench-slo-{os.getpid()}", "enable.auto.commit": False,
                                  "fetch.wait.max.ms": 50})
        self.consumer.assign([TopicPartition(topic, p, offset) for p, offset in start.items()])
        self.stop = threading.Event()
        self.arrived: list[float] = []  # arrival times (monotonic)
        self.latencies_ms: list[int] = []

    def run(self) -> None:
        while not self.stop.is_set():
            for message in self.consumer.consume(5000, timeout=0.2):
                if message.error() is None:
                    now_ms = time.time_ns() // 1_000_000
                    self.arrived.append(time.monotonic())
                    self.latencies_ms.append(max(0, now_ms - message.timestamp()[1]))
        self.consumer.close()


class Prober(threading.Thread):
    """`mm2gov probe`'s runs, back to back, on the flow: every canary's latency, lost and duplicated counts."""

    def __init__(self, flow: Any, configs: tuple[dict, dict], per_partition: int) -> None:
        super().__init__(daemon=True)
        self.flow, self.configs, self.per_partition = flow, configs, per_partition
        self.stop = threading.Event()
        self.latencies_ms: list[int] = []
        self.sent = self.lost = self.duplicated = 0

    def run(self) -> None:
        while not self.stop.is_set():
            done = probe_once(self.flow, *self.configs, self.per_partition, wait=30)
            result = assess(done.run, done.sent, done.received)
            self.sent += result.sent
            self.lost += len(result.lost)
            self.duplicated += result.duplicated
            self.latencies_ms += list(result.latencies_ms)


def remote_topics_ready(config: dict[str, Any], topics: list[str], partitions: int, timeout: float = 180) -> None:
    """Wait until MM2 created the flow's remote topics on the target (at its first scan)."""
    admin = admin_client(config)
    deadline = time.monotonic() + timeout
    while True:
        found = admin.list_topics(timeout=10).topics
        if all(t in found and len(found[t].partitions) >= (partitions if t.endswith(TOPIC) else 1) for t in topics):
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"MM2 did not create {topics} on the target within {timeout:.0f} s")
        time.sleep(1)


def mm2_latency(metrics_url: str) -> tuple[float, float] | None:
    """MM2's replication-latency-ms for TOPIC's partitions (its MBeans name the remote topic): (mean of the
    averages, max of the maxima)."""
    remote = remote_name("default", SOURCE, TOPIC)
    with urllib.request.urlopen(metrics_url, timeout=10) as response:
        text = response.read().decode()
    averages, maxima = [], []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.labels.get("topic") != remote:
                continue
            if sample.name == LATENCY_METRIC + "_avg":
                averages.append(sample.value)
            elif sample.name == LATENCY_METRIC + "_max":
                maxima.append(sample.value)
    averages = [a for a in averages if a == a]  # NaN until a record went through
    maxima = [m for m in maxima if m == m]
    return (sum(averages) / len(averages), max(maxima)) if averages and maxima else None


# -- one step, the ramp ------------------------------------------------------------------------


@dataclass
class Step:
    offered: int
    written_rate: float
    delivered_rate: float
    lag_at_stop: int
    probe_p50_ms: int | None
    probe_p99_ms: int | None
    probe_lost: int
    probe_duplicated: int
    records_p50_ms: int | None
    records_p99_ms: int | None
    mm2_latency_avg_ms: float | None
    mm2_latency_max_ms: float | None
    probe_rate: float
    saturated: bool
    failed_writes: int = 0
    notes: list[str] = field(default_factory=list)


def step(stack: Stack, flow: Any, configs: tuple[dict, dict], metrics_url: str, rate: int, seconds: float,
         partitions: int, value: bytes) -> Step:
    source, target = stack.kafka[SOURCE], stack.kafka[TARGET]
    remote = remote_name("default", SOURCE, TOPIC)
    marks = Consumer({**target.admin_config(), "group.id": "bench-slo-marks"})
    try:
        start = {p: marks.get_watermark_offsets(TopicPartition(remote, p), timeout=10)[1] for p in range(partitions)}
    finally:
        marks.close()
    arrivals = Arrivals(target.admin_config(), remote, start)
    prober = Prober(flow, configs, per_partition=5)
    writer = Writer(source.admin_config(), rate, seconds, partitions, value)
    samples: list[tuple[float, float]] = []
    arrivals.start()
    prober.start()
    began = time.monotonic()
    writer.start()
    while writer.is_alive():
        writer.join(2)
        if (sample := mm2_latency(metrics_url)) is not None:
            samples.append(sample)
    window = time.monotonic() - began
    delivered_in_window = sum(1 for t in arrivals.arrived if t <= began + window)
    prober.stop.set()
    prober.join(60)
    time.sleep(2)
    arrivals.stop.set()
    arrivals.join(30)
    written = writer.acked
    delivered_rate = delivered_in_window / window
    return Step(
        offered=rate, written_rate=written / window, delivered_rate=delivered_rate,
        lag_at_stop=max(0, written - delivered_in_window),
        probe_p50_ms=percentile(prober.latencies_ms, 0.5) if prober.latencies_ms else None,
        probe_p99_ms=percentile(prober.latencies_ms, 0.99) if prober.latencies_ms else None,
        probe_lost=prober.lost, probe_duplicated=prober.duplicated,
        records_p50_ms=percentile(arrivals.latencies_ms, 0.5) if arrivals.latencies_ms else None,
        records_p99_ms=percentile(arrivals.latencies_ms, 0.99) if arrivals.latencies_ms else None,
        mm2_latency_avg_ms=sum(s[0] for s in samples) / len(samples) if samples else None,
        mm2_latency_max_ms=max(s[1] for s in samples) if samples else None,
        probe_rate=prober.sent / window, saturated=delivered_rate < SATURATED * (written / window),
        failed_writes=writer.failed)


def fmt(value: float | int | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:,.0f}{unit}"


def print_text(steps: list[Step], opts: argparse.Namespace) -> None:
    print(f"\none at-least-once flow, {opts.partitions} partitions, {opts.value_bytes}-byte values, "
          f"{opts.seconds:.0f} s per rate, on {os.cpu_count()} shared cores")
    header = (f"{'offered/s':>10} {'written/s':>10} {'delivered/s':>11} {'lag':>8} | {'probe p50':>9} "
              f"{'p99':>7} {'lost':>4} {'dup':>4} | {'records p50':>11} {'p99':>7} | {'MM2 avg':>8} {'max':>7} | "
              f"{'probe/s':>7} {'overhead':>8}")
    print(header)
    for s in steps:
        overhead = f"{100 * s.probe_rate / s.written_rate:.2f}%" if s.written_rate else "-"
        print(f"{s.offered:>10,} {fmt(s.written_rate):>10} {fmt(s.delivered_rate):>11} {s.lag_at_stop:>8,} | "
              f"{fmt(s.probe_p50_ms, ' ms'):>9} {fmt(s.probe_p99_ms, ' ms'):>7} {s.probe_lost:>4} "
              f"{s.probe_duplicated:>4} | {fmt(s.records_p50_ms, ' ms'):>11} {fmt(s.records_p99_ms, ' ms'):>7} | "
              f"{fmt(s.mm2_latency_avg_ms, ' ms'):>8} {fmt(s.mm2_latency_max_ms, ' ms'):>7} | "
              f"{s.probe_rate:>7.1f} {overhead:>8}" + ("  saturated" if s.saturated else ""))
    kept = [s for s in steps if not s.saturated]
    if kept:
        best = max(kept, key=lambda s: s.delivered_rate)
        print(f"highest rate the flow kept up with: {best.delivered_rate:,.0f} records/s "
              f"(probe p99 {fmt(best.probe_p99_ms, ' ms')}, records p99 {fmt(best.records_p99_ms, ' ms')})")
    if steps and steps[-1].saturated:
        print(f"saturated at {steps[-1].offered:,} records/s offered: delivered {steps[-1].delivered_rate:,.0f}/s "
              f"of {steps[-1].written_rate:,.0f}/s written")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start-rate", type=int, default=1000)
    parser.add_argument("--max-rate", type=int, default=64000)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--value-bytes", type=int, default=512)
    parser.add_argument("--format", choices=["text", "json"], default="text")
    opts = parser.parse_args()
    value = os.urandom(opts.value_bytes)
    steps: list[Step] = []
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-slo-") as tmp:
        root = Path(tmp)
        stack = Stack(StackSpec(run_dir=root / "stack", components=("kafka",))).up()
        try:
            secrets = root / "secrets"
            stack.export_secret_store(secrets)
            repo, properties, jmx = governed_flow(stack, root, secrets)
            create_topics(admin_client(stack.kafka[SOURCE].admin_config()), [TOPIC], partitions=opts.partitions)
            inventory = load_inventory(repo)
            [flow] = probe_flows(decide(inventory).tenancy, TENANT)
            configs = probe_configs(inventory.clusters, flow, DirSecretStore(secrets))
            ensure_topic(flow.source, configs[0], flow.topic)  # before MM2 starts: replicated from its first scan
            mm2 = stack.start_mirrormaker(flow.flow, properties, metrics_config=jmx)
            try:
                assert mm2.metrics_url
                remote_topics_ready(stack.kafka[TARGET].admin_config(), [remote_name("default", SOURCE, TOPIC),
                                                                         flow.remote_topic], opts.partitions)
                warm = step(stack, flow, configs, mm2.metrics_url, opts.start_rate, 10, opts.partitions, value)
                if opts.format == "text":
                    print(f"warm-up at {warm.offered:,}/s: delivered {warm.delivered_rate:,.0f}/s (not counted)")
                rate = opts.start_rate
                while rate <= opts.max_rate:
                    result = step(stack, flow, configs, mm2.metrics_url, rate, opts.seconds, opts.partitions, value)
                    steps.append(result)
                    if opts.format == "text":
                        print(f"{rate:,}/s offered: delivered {result.delivered_rate:,.0f}/s, probe p99 "
                              f"{fmt(result.probe_p99_ms, ' ms')}", flush=True)
                    if result.saturated:
                        break
                    rate *= 2
            finally:
                stack.stop_mirrormaker(flow.flow)
        finally:
            stack.down()
    if opts.format == "json":
        print(json.dumps({"options": vars(opts), "cores": os.cpu_count(), "steps": [asdict(s) for s in steps]},
                         indent=2))
    else:
        print_text(steps, opts)


if __name__ == "__main__":
    main()
