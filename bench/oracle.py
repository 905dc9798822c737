"""Benchmark: the Java oracle's throughput (Kafka's own classes answering over one pipe).

Prints the oracle's start time (JVM + first answer); regex checks per second, pipelined, over
generated `topics` lists of six shapes (literal, prefix, three items, class + quantifier,
alternation, (?x) with spaces) against names built to match or miss, each answer checked
against the names built to match; the same one request at a time (round-trip latency); LIST
parses per second; `mm2` answers per second on a generated-style dedicated MM2 file.

Usage: python bench/oracle.py [--patterns N] [--names-per-pattern K] [--batch B] [--mm2-requests M]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(REPO_ROOT)  # the repo, not bench/: bench/secrets.py would shadow the stdlib

from devstack.oracle import JavaOracle  # noqa: E402

Case = tuple[str, list[str], list[str]]  # LIST value, names asked, names that must match


def case(i: int, names_per_pattern: int, rng: random.Random) -> Case:
    """One `topics` value of shape i % 6, with names built to match and names built to miss."""
    t = f"t{i:05d}"
    shapes: list[tuple[str, list[str], list[str]]] = [
        (rf"{t}\.orders", [f"{t}.orders"], [f"{t}Xorders", f"{t}.orders.x", f"x{t}.orders"]),
        (rf"{t}\..*", [f"{t}.a", f"{t}.b.c"], [t, f"{t}x.a", f"u{t}.a"]),
        (rf"{t}\.orders.*,{t}\.refunds,{t}\.public\..*", [f"{t}.orders", f"{t}.orders-eu", f"{t}.refunds",
                                                          f"{t}.public.p"], [f"{t}.refunds.raw", f"{t}.public"]),
        (rf"{t}-[a-z]+[0-9]?", [f"{t}-abc", f"{t}-z9"], [f"{t}-", f"{t}-ab12", f"{t}-ABC"]),
        (rf"{t}\.(orders|refunds)(\.eu)?", [f"{t}.orders", f"{t}.refunds.eu"], [f"{t}.orders.us", f"{t}.x"]),
        (rf"(?x) {t} \. orders \. [0-9]+", [f"{t}.orders.1", f"{t}.orders.42"], [f"{t} . orders . 1", f"{t}.orders."]),
    ]
    value, good, bad = shapes[i % len(shapes)]
    noise = [f"t{rng.randrange(100000):05d}.{rng.choice(['orders', 'x', 'public.p'])}"
             for _ in range(names_per_pattern)]
    noise = [n for n in noise if not n.startswith(f"{t}.")]
    names = (good + bad + noise)[:max(names_per_pattern, len(good) + len(bad))]
    rng.shuffle(names)
    return value, names, [n for n in names if n in good]


def mm2_text(topics: int) -> str:
    """A dedicated MM2 file shaped like the ones `mm2gov generate` writes (providers, SASL_SSL, one flow)."""
    lines = ["clusters=onprem,cloud", "config.providers=dir",
             "config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider"]
    for alias, port in (("onprem", 19093), ("cloud", 29093)):
        lines += [f"{alias}.bootstrap.servers=127.0.0.1\\:{port}", f"{alias}.security.protocol=SASL_SSL",
                  f"{alias}.sasl.mechanism=SCRAM-SHA-512",
                  f"{alias}.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                  f'username="mm2" password="${{dir:/etc/mm2gov/secrets/{alias}:password}}";']
    lines += ["onprem->cloud.enabled=true", "cloud->onprem.enabled=false",
              "onprem->cloud.topics=" + ",".join(f"t{i:05d}\\\\..*" for i in range(topics)),
              "onprem->cloud.groups=t00000-.*", "sync.topic.acls.enabled=false", "emit.heartbeats.enabled=false"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--patterns", type=int, default=20000, help="regex requests (one LIST value each)")
    parser.add_argument("--names-per-pattern", type=int, default=20)
    parser.add_argument("--batch", type=int, default=2000, help="requests pipelined per round trip")
    parser.add_argument("--mm2-requests", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(42)
    cases = [case(i, args.names_per_pattern, rng) for i in range(args.patterns)]
    checks = sum(len(names) for _, names, _ in cases)

    began = time.perf_counter()
    with JavaOracle() as oracle:
        start_s = time.perf_counter() - began
        oracle.matches_many([(value, names) for value, names, _ in cases[:args.batch]])  # JIT warm-up

        began = time.perf_counter()
        answers: list[list[str]] = []
        for at in range(0, len(cases), args.batch):
            answers += oracle.matches_many([(value, names) for value, names, _ in cases[at:at + args.batch]])
        regex_s = time.perf_counter() - began
        wrong = [value for (value, _, expected), got in zip(cases, answers, strict=True) if got != expected]

        single = cases[:1000]
        began = time.perf_counter()
        for value, names, expected in single:
            if oracle.matches(value, names) != expected:
                wrong.append(value)
        single_s = time.perf_counter() - began

        lists = [value for value, _, _ in cases[:10000]]
        began = time.perf_counter()
        parsed = oracle.requests({"op": "list", "value": value} for value in lists)
        list_s = time.perf_counter() - began
        wrong += [v for v, a in zip(lists, parsed, strict=True) if a["items"] != [i.strip() for i in v.split(",")]]

        text = mm2_text(100)
        topics = [f"t{i:05d}.orders" for i in range(0, 200)]
        oracle.mm2(text, topics)  # warm-up
        began = time.perf_counter()
        for _ in range(args.mm2_requests):
            pair = oracle.mm2(text, topics, ["t00000-app"]).pair("onprem", "cloud")
            if pair.topics != tuple(topics[:100]):
                wrong.append("mm2")
        mm2_s = time.perf_counter() - began

    print(f"oracle {oracle.kafka_version}: JVM start + first answer {start_s:6.2f} s")
    print(f"regex, pipelined ({args.batch}/round trip): {len(cases):,} checks of {checks:,} names in {regex_s:.2f} s: "
          f"{len(cases) / regex_s:,.0f} checks/s, {checks / regex_s:,.0f} pattern x name/s")
    print(f"regex, one at a time: {len(single):,} in {single_s:.2f} s: {single_s / len(single) * 1000:.2f} ms per "
          f"round trip ({len(single) / single_s:,.0f}/s)")
    print(f"list, pipelined: {len(lists):,} in {list_s:.2f} s: {len(lists) / list_s:,.0f}/s")
    print(f"mm2 (100-item topics, 200 names): {args.mm2_requests} in {mm2_s:.2f} s: "
          f"{mm2_s / args.mm2_requests * 1000:.1f} ms each")
    total = len(cases) + len(single) + len(lists) + args.mm2_requests
    print(f"answers checked: {total - len(wrong):,}/{total:,} as expected")
    if wrong:
        raise SystemExit(f"wrong answers, first: {wrong[:5]}")


if __name__ == "__main__":
    main()
