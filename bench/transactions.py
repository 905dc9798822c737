"""Benchmark: what one exactly-once commit costs on the stack's brokers, and how much of it is the broker's retry.

An exactly-once MirrorMaker 2 task (KIP-618, `transaction.boundary=poll`) under a paced feed commits one
transaction per poll and polls again at once: its next transaction's first write reaches the brokers while the
previous one's markers are still being written. Kafka 4's brokers answer that write CONCURRENT_TRANSACTIONS
inside, and retry it themselves after `add.partitions.to.txn.retry.backoff.ms` (KAFKA-18654; 20 ms by default,
a read-only broker setting). This bench measures that cost with Kafka's own producer
(bench/java/TransactionProbe.java, run as a single source file on the stack's Kafka jars): transactions shaped
as the task's (one 512-byte record to each of `--partitions` partitions, flushed; then one record to each of as
many partitions of an offsets topic, as Connect writes a poll's source offsets; commit), `--count` of them:

- on the target broker as the stack starts it (Kafka's default backoff, 20 ms), and on the source broker,
  restarted with `add.partitions.to.txn.retry.backoff.ms=--backoff` (the only difference between the two);
- back to back (gap 0, as the task) and `--gap` ms apart (the previous transaction's markers written by then).

Each combination runs `--rounds` times, alternated (a fresh producer and transactional id each time; the first
`--warmup` transactions of each are not counted): p50, p90, p99 and max of the data step (begin, send, flush)
and of the commit step (offsets, commit), per combination over its rounds. Answers are checked: each data topic,
read with isolation.level=read_committed, holds one record per partition per committed transaction. A probe
that fails (a transaction that never completes) is reported with its error, and its committed transactions
still counted.

Usage: python bench/transactions.py [--count 400] [--warmup 50] [--gap 20] [--backoff 2] [--rounds 2]
       [--partitions 6] [--format json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

import javaproperties  # noqa: E402
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition  # noqa: E402

from bench.replication import percentile  # noqa: E402
from devstack import tools  # noqa: E402
from devstack.stack import CA_SECRET_NAME, Stack, StackSpec  # noqa: E402
from governance.kafka.admin import admin_client, create_topics  # noqa: E402
from governance.model.names import CA_CERT_KEY, PASSWORD_KEY  # noqa: E402

PROBE = REPO_ROOT / "bench" / "java" / "TransactionProbe.java"
BACKOFF_KEY = "add.partitions.to.txn.retry.backoff.ms"
KAFKA_BACKOFF_MS = 20  # the key's default (Kafka's broker configs)
LOWERED, DEFAULT = "source", "target"  # the cluster restarted with --backoff, the one as the stack starts it
DATA, OFFSETS, OFFSETS_PARTITIONS = "probe-data", "probe-offsets", 25  # Connect's offsets topic has 25


@dataclass
class Combination:
    cluster: str
    gap_ms: int
    data_ms: list[float] = field(default_factory=list)
    commit_ms: list[float] = field(default_factory=list)
    committed: int = 0
    errors: list[str] = field(default_factory=list)

    def label(self, backoff: int) -> str:
        return f"backoff {backoff if self.cluster == LOWERED else KAFKA_BACKOFF_MS:>2} ms, gap {self.gap_ms:>2} ms"


def client_properties(stack: Stack, secrets: Path, alias: str) -> str:
    """The stack's admin over SASL_SSL, its password read from the secret store by DirectoryConfigProvider
    (never in this file); acks=all and idempotence as Connect's exactly-once producer."""
    password = f"${{dir:{secrets}/{alias}-admin:{PASSWORD_KEY}}}"  # export_secret_store's layout
    return javaproperties.dumps({
        "bootstrap.servers": stack.kafka[alias].bootstrap_servers,
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": f'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" '
                            f'password="{password}";',
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(secrets / CA_SECRET_NAME / CA_CERT_KEY),
        "config.providers": "dir",
        "config.providers.dir.class": "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
        "acks": "all", "enable.idempotence": "true", "delivery.timeout.ms": "30000", "request.timeout.ms": "10000",
        "max.block.ms": "30000",
    }, timestamp=False)


def probe(stack: Stack, properties: Path, alias: str, opts: argparse.Namespace, gap_ms: int) -> dict[str, Any]:
    argv = [str(tools.java()), "-cp", stack.kafka[alias].dist.classpath, str(PROBE), str(properties), DATA, OFFSETS,
            str(opts.partitions), str(opts.warmup + opts.count), str(gap_ms), f"bench-probe-{uuid.uuid4().hex}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"the transaction probe failed on {alias} (exit {done.returncode}):\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def committed_records(stack: Stack, alias: str, partitions: int) -> int:
    """Records in the data topic a read_committed consumer sees (the answer check)."""
    consumer = Consumer({**stack.kafka[alias].admin_config(), "group.id": f"bench-check-{uuid.uuid4().hex}",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    try:
        seen = 0
        for partition in range(partitions):
            _, end = consumer.get_watermark_offsets(TopicPartition(DATA, partition), timeout=30)
            if end <= 0:
                continue
            consumer.assign([TopicPartition(DATA, partition, OFFSET_BEGINNING)])
            deadline = time.monotonic() + 60
            # every transaction ended (committed, or aborted by a probe that stopped): the last stable offset is
            # the end, markers included, and the position reaches it past the last record or marker
            while consumer.position([TopicPartition(DATA, partition)])[0].offset < end:
                if time.monotonic() > deadline:
                    raise SystemExit(f"could not read {DATA}-{partition} to its end ({end}) on {alias}")
                seen += sum(1 for message in consumer.consume(10_000, timeout=1) if message.error() is None)
        return seen
    finally:
        consumer.close()


def percentiles(values: list[float]) -> dict[str, float]:
    return {"p50": percentile(values, 0.5), "p90": percentile(values, 0.9), "p99": percentile(values, 0.99),
            "max": max(values)} if values else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=400, help="counted transactions per probe")
    parser.add_argument("--warmup", type=int, default=50, help="transactions per probe before the counted ones")
    parser.add_argument("--gap", type=int, default=20, help="ms between transactions in the paused combinations")
    parser.add_argument("--backoff", type=int, default=2, help=f"the source broker's {BACKOFF_KEY} (>= 1)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--format", choices=["text", "json"], default="text")
    opts = parser.parse_args()
    if opts.backoff < 1 or opts.count < 1 or opts.partitions < 1 or opts.partitions > OFFSETS_PARTITIONS:
        parser.error(f"--backoff and --count must be >= 1, --partitions within 1..{OFFSETS_PARTITIONS}")
    text = opts.format == "text"
    combos = [Combination(cluster, gap) for gap in (0, opts.gap) for cluster in (DEFAULT, LOWERED)]
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-transactions-") as tmp:
        root = Path(tmp)
        stack = Stack(StackSpec(run_dir=root / "stack", components=("kafka",))).up()
        try:
            lowered = stack.kafka[LOWERED]
            assert lowered.process is not None
            lowered.process.stop()
            lowered.overrides[BACKOFF_KEY] = str(opts.backoff)
            lowered.start()
            secrets = root / "secrets"
            stack.export_secret_store(secrets)
            files = {}
            for alias in (DEFAULT, LOWERED):
                admin = admin_client(stack.kafka[alias].admin_config())
                create_topics(admin, [DATA], partitions=opts.partitions)
                create_topics(admin, [OFFSETS], partitions=OFFSETS_PARTITIONS)
                files[alias] = root / f"{alias}.properties"
                files[alias].write_text(client_properties(stack, secrets, alias))
            for round_ in range(opts.rounds):
                for combo in combos[round_ % len(combos):] + combos[:round_ % len(combos)]:
                    result = probe(stack, files[combo.cluster], combo.cluster, opts, combo.gap_ms)
                    counted = slice(opts.warmup, None)
                    combo.data_ms += [ns / 1e6 for ns in result["data_ns"][counted]]
                    combo.commit_ms += [ns / 1e6 for ns in result["commit_ns"][counted]]
                    combo.committed += result["committed"]
                    if result["error"]:
                        combo.errors.append(result["error"])
                    if text:
                        print(f"round {round_ + 1}: {combo.label(opts.backoff)}: {result['committed']} committed"
                              + (f"; stopped: {result['error']}" if result["error"] else ""), flush=True)
            checks = {}
            for alias in (DEFAULT, LOWERED):
                expected = sum(c.committed for c in combos if c.cluster == alias) * opts.partitions
                checks[alias] = (committed_records(stack, alias, opts.partitions), expected)
        finally:
            stack.down()
    rows = [{"broker_backoff_ms": opts.backoff if c.cluster == LOWERED else KAFKA_BACKOFF_MS, "gap_ms": c.gap_ms,
             "transactions": len(c.data_ms), "data_ms": percentiles(c.data_ms),
             "commit_ms": percentiles(c.commit_ms), "errors": c.errors,
             "data_at_least_default_backoff": sum(1 for ms in c.data_ms if ms >= KAFKA_BACKOFF_MS)} for c in combos]
    wrong = {alias: got for alias, got in checks.items() if got[0] != got[1]}
    if not text:
        print(json.dumps({"options": vars(opts), "combinations": rows,
                          "check": {a: {"read_committed": g, "expected": e} for a, (g, e) in checks.items()}},
                         indent=2))
    else:
        print(f"\n{opts.count} transactions per probe after {opts.warmup} not counted, {opts.rounds} rounds; "
              f"{opts.partitions} data records (512 B) + {opts.partitions} offset records per transaction:")
        print(f"  {'combination':<28} {'n':>5}  {'data step p50/p90/p99/max ms':<30} {'commit step, the same':<26} "
              f"data step >= {KAFKA_BACKOFF_MS} ms")
        for c in combos:
            steps = ["/".join(f"{value:.1f}" for value in percentiles(ms).values()) for ms in (c.data_ms, c.commit_ms)]
            slow = sum(1 for ms in c.data_ms if ms >= KAFKA_BACKOFF_MS) / max(1, len(c.data_ms))
            print(f"  {c.label(opts.backoff):<28} {len(c.data_ms):>5}  {steps[0]:<30} {steps[1]:<26} {slow:.0%}"
                  + (f"  ({len(c.errors)} probe(s) stopped)" if c.errors else ""))
        for alias, (got, expected) in checks.items():
            print(f"check: {alias} holds {got} committed records, {expected} expected")
    if wrong:
        raise SystemExit(f"committed records do not match what the probes committed: {wrong}")


if __name__ == "__main__":
    main()
