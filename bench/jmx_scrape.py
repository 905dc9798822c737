"""Benchmark: what one Prometheus scrape of a flow's MM2 costs, with the generated JMX exporter file.

Starts the local stack's two Kafka clusters, applies and generates a governance repo with one tenant
(`mm2gov apply`, `mm2gov generate`, as a user runs them), creates `--topics` topics of `--partitions`
partitions with a record in each partition, and runs the flow's dedicated MM2 with the JMX exporter agent on
two exporter files, alternated over `--rounds` rounds (a fresh MM2 each time):

- generated: `monitoring/jmx/<tenant>.yaml` as `mm2gov generate` wrote it (its `includeObjectNames` name the
  MBean types its rules read);
- every-mbean: the same file without `includeObjectNames`, the exporter's default (it reads every attribute
  of every MBean of the JVM and drops what no rule matches): the reference.

Each run waits until the MM2's /metrics shows the worker's tasks and every partition's series, scrapes it 10
times to warm up, measures the MM2 JVM's idle CPU for 10 s, then scrapes `--scrapes` times back to back: the
median and p90 wall time of a scrape, and the MM2's CPU per scrape beyond its idle rate. Answers are checked:
every run must return the same series of the flow (names and labels; values differ), non-empty, with the
worker's and every partition's.

Usage: python bench/jmx_scrape.py [--topics 3] [--partitions 6] [--scrapes 100] [--rounds 2] [--format json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

import yaml  # noqa: E402
from confluent_kafka import Producer  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from bench.replication import cli, percentile  # noqa: E402
from devstack.cpu import group_cpu_seconds  # noqa: E402
from devstack.repo import write_stack_repo  # noqa: E402
from devstack.stack import Stack, StackSpec  # noqa: E402
from governance.compile.monitoring.common import LATENCY_METRIC, METRIC_PREFIX, WORKER_METRIC  # noqa: E402
from governance.files import YAML_DUMPER  # noqa: E402
from governance.kafka.admin import admin_client, create_topics  # noqa: E402
from governance.model.names import flow_id  # noqa: E402

TENANT = "jmxbench"
VARIANTS = ("generated", "every-mbean")
Series = frozenset[tuple[str, tuple[tuple[str, str], ...]]]


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as answer:
        return answer.read().decode()


def flow_series(text: str) -> Series:
    """The flow's series on one /metrics answer: names and labels, values left out."""
    return frozenset((sample.name, tuple(sorted(sample.labels.items())))
                     for family in text_string_to_metric_families(text) for sample in family.samples
                     if sample.name.startswith((WORKER_METRIC, METRIC_PREFIX)))


def complete(text: str, topics: list[str], partitions: int) -> bool:
    """The worker holds tasks and every partition of every topic has its latency series."""
    series = flow_series(text)
    tasks = any(name == WORKER_METRIC for name, _ in series)
    seen = {(labels["topic"], labels["partition"]) for name, items in series if name == LATENCY_METRIC
            for labels in [dict(items)]}
    return tasks and all((f"source.{t}", str(p)) in seen for t in topics for p in range(partitions))


def run_one(stack: Stack, flow: str, properties: Path, exporter: Path, topics: list[str],
            args: argparse.Namespace) -> dict[str, Any]:
    mm2 = stack.start_mirrormaker(flow, properties, metrics_config=exporter)
    try:
        deadline = time.monotonic() + 180
        while not complete(text := scrape(mm2.metrics_url), topics, args.partitions):
            if time.monotonic() > deadline:
                raise SystemExit(f"{exporter.name}: the MM2's series were not all there in 180 s")
            time.sleep(1)
        for _ in range(10):
            scrape(mm2.metrics_url)
        pid = mm2.pid
        assert pid is not None
        before = group_cpu_seconds(pid)
        time.sleep(10)
        idle_rate = (group_cpu_seconds(pid) - before) / 10
        seconds: list[float] = []
        before, began = group_cpu_seconds(pid), time.monotonic()
        for _ in range(args.scrapes):
            start = time.perf_counter()
            text = scrape(mm2.metrics_url)
            seconds.append(time.perf_counter() - start)
        cpu, wall = group_cpu_seconds(pid) - before, time.monotonic() - began
    finally:
        stack.stop_mirrormaker(flow)
    return {"median_ms": statistics.median(seconds) * 1000, "p90_ms": percentile(seconds, 0.9) * 1000,
            "cpu_ms_per_scrape": max(0.0, cpu - idle_rate * wall) / args.scrapes * 1000,
            "idle_cpu_ms_per_s": idle_rate * 1000, "bytes": len(text.encode()), "series": flow_series(text)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--scrapes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args()
    runs: dict[str, list[dict[str, Any]]] = {variant: [] for variant in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-jmx-") as tmp:
        root = Path(tmp)
        stack = Stack(StackSpec(run_dir=root / "stack", components=("kafka",))).up()
        try:
            repo, secrets, out = root / "repo", root / "secrets", root / "out"
            write_stack_repo(stack, repo, [TENANT])
            stack.export_secret_store(secrets)
            source = stack.kafka["source"].admin_config()
            topics = [f"{TENANT}.t{n}" for n in range(args.topics)]
            create_topics(admin_client(source), topics, partitions=args.partitions)
            producer = Producer(source)
            for topic in topics:
                for partition in range(args.partitions):
                    producer.produce(topic, value=b"v", partition=partition)
            if producer.flush(30) != 0:
                raise SystemExit("records left unsent")
            del producer  # its connections closed now, not after the brokers stop
            cli("apply", str(repo), "--secrets-dir", str(secrets))
            cli("generate", str(repo), "--out", str(out), "--secrets-path", str(secrets))
            flow = flow_id(TENANT, "source", "target")
            generated = out / "monitoring" / "jmx" / f"{TENANT}.yaml"
            reference = yaml.safe_load(generated.read_text())
            del reference["includeObjectNames"]
            (root / "every-mbean.yaml").write_text(yaml.dump(reference, Dumper=YAML_DUMPER))
            files = {"generated": generated, "every-mbean": root / "every-mbean.yaml"}
            for n in range(args.rounds):
                for variant in VARIANTS[n % 2:] + VARIANTS[:n % 2]:
                    runs[variant].append(run_one(stack, flow, out / "mm2" / f"{flow}.properties", files[variant],
                                                 topics, args))
                    print(f"round {n + 1} {variant}: done", file=sys.stderr, flush=True)
        finally:
            stack.down()
    answers = {run.pop("series") for variant in VARIANTS for run in runs[variant]}
    if len(answers) != 1:
        raise SystemExit("the exporter files returned different series of the flow: " + str(len(answers)))
    [series] = answers
    result = {variant: {key: statistics.median(run[key] for run in runs[variant])
                        for key in ("median_ms", "p90_ms", "cpu_ms_per_scrape", "idle_cpu_ms_per_s", "bytes")}
              for variant in VARIANTS}
    result["series"] = len(series)
    result["cpu_ratio"] = result["every-mbean"]["cpu_ms_per_scrape"] / result["generated"]["cpu_ms_per_scrape"]
    if args.format == "json":
        print(json.dumps({"runs": runs, "median": result}, indent=2))
        return
    print(f"one flow's MM2, {args.topics} topics x {args.partitions} partitions, {len(series)} series of the flow "
          f"(the same in every run), {args.scrapes} scrapes per run, {args.rounds} rounds (medians):")
    for variant in VARIANTS:
        row = result[variant]
        print(f"  {variant:<12} scrape p50 {row['median_ms']:6.1f} ms  p90 {row['p90_ms']:6.1f} ms  "
              f"MM2 CPU {row['cpu_ms_per_scrape']:6.1f} ms a scrape (beyond {row['idle_cpu_ms_per_s']:.0f} ms/s "
              f"idle)  {row['bytes']:,.0f} bytes")
    print(f"  every-mbean / generated: {result['cpu_ratio']:.2f}x the MM2's CPU a scrape")


if __name__ == "__main__":
    main()
