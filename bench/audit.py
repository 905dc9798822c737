"""Benchmark: the ACL detectors of the PySpark audit on a synthetic estate, at three sizes.

A generated governance repo of 100 tenants (20 principals each, one flow
dc1 -> cloud1 each) gives the tenancy; the snapshot has 50,000 topics (250 per
tenant on dc1 and their 250 replicas on cloud1) and 50k, 100k, 200k ACL
bindings: what mm2gov would generate (PREFIXED, ~16k) plus LITERAL per-topic
bindings of each tenant's principals on its own topics, plus five planted leaks
(a cross-tenant LITERAL read, a prefix without separator, a `User:*` binding, a
stale principal, an MM2 principal reading another tenant). Each detector runs to
completion (Spark's `noop` sink) on local[2]; the figures are wall-clock seconds.
Target: < 60 s for all five at 200k bindings, and time growing about linearly
(x4 bindings -> well under x4 time, fixed costs included).

Usage: python bench/audit.py [--sizes 50000,100000,200000] [--master local[2]]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
# Run as a script, Python puts bench/ first on the path, where a module may shadow the stdlib's
# (bench/secrets.py shadows `secrets`): import from the repo root instead.
sys.path[:] = [str(REPO_ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent)]

from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from governance.config import load_inventory  # noqa: E402
from governance.policy.decide import decide  # noqa: E402
from spark_audit.checks import ACL_CHECKS, CHECKS  # noqa: E402
from spark_audit.model import SNAPSHOT_SCHEMAS, Snapshot, Tenancy  # noqa: E402
from spark_audit.run import spark_session  # noqa: E402
from spark_audit.tenancy import build_tenancy  # noqa: E402

TENANTS, PRINCIPALS, TOPICS_PER_TENANT = 100, 20, 250
SOURCE, TARGET = "dc1", "cloud1"


def tenant(i: int) -> str:
    return f"t{i:03d}"


def write_repo(root: Path) -> None:
    (root / "tenants").mkdir(parents=True)
    security = "    security: {protocol: SASL_SSL, sasl_mechanism: SCRAM-SHA-512}"
    (root / "clusters.yaml").write_text(
        "clusters:\n" + "".join(f"  {name}:\n    bootstrap_servers: \"{name}.example:9093\"\n    zone: {zone}\n"
                                f"{security}\n" for name, zone in ((SOURCE, "onprem"), (TARGET, "cloud"))))
    for i in range(TENANTS):
        name = tenant(i)
        principals = "".join(f"  - {{name: \"User:{name}-app-{k:02d}\", access: [read, write]}}\n"
                             for k in range(PRINCIPALS))
        (root / "tenants" / f"{name}.yaml").write_text(
            f"name: {name}\nowners: [\"{name}@example.com\"]\nclassification: internal\n"
            f"topic_prefixes: [\"{name}.\"]\ngroup_prefixes: [\"{name}-\"]\nprincipals:\n{principals}"
            f"flows:\n  - source: {SOURCE}\n    target: {TARGET}\n    topics: [\"{name}\\\\..*\"]\n"
            f"    groups: [\"{name}-.*\"]\n")


def generated_bindings() -> list[tuple]:
    """What mm2gov generates for the repo (compile/acls.py): tenant principals and MM2."""
    rows = []

    def add(cluster: str, principal: str, resource_type: str, name: str, ops: list[str]) -> None:
        pattern = "LITERAL" if resource_type == "CLUSTER" else "PREFIXED"
        rows.extend((cluster, principal, "*", op, "ALLOW", resource_type, name, pattern) for op in ops)

    for i in range(TENANTS):
        name = tenant(i)
        flow = f"{name}-{SOURCE}-to-{TARGET}"
        for k in range(PRINCIPALS):
            principal = f"User:{name}-app-{k:02d}"
            add(SOURCE, principal, "TOPIC", f"{name}.", ["DESCRIBE", "READ", "WRITE"])
            add(SOURCE, principal, "GROUP", f"{name}-", ["READ"])
            add(TARGET, principal, "TOPIC", f"{SOURCE}.{name}.", ["DESCRIBE", "READ"])
            add(TARGET, principal, "GROUP", f"{name}-", ["READ"])
        mm2 = f"User:mm2-{flow}"
        add(SOURCE, mm2, "TOPIC", f"{name}.", ["READ", "DESCRIBE", "DESCRIBE_CONFIGS"])
        add(SOURCE, mm2, "GROUP", f"{name}-", ["DESCRIBE"])
        add(TARGET, mm2, "TOPIC", f"{SOURCE}.{name}.",
            ["CREATE", "WRITE", "ALTER", "ALTER_CONFIGS", "DESCRIBE", "DESCRIBE_CONFIGS"])
        add(TARGET, mm2, "TOPIC", f"mm2gov.{flow}.", ["CREATE", "READ", "WRITE", "DESCRIBE", "DESCRIBE_CONFIGS"])
        add(TARGET, mm2, "GROUP", f"mm2gov.{flow}.", ["READ", "DESCRIBE"])  # nothing on CLUSTER
    return rows


LEAKS = [
    (SOURCE, "User:t001-app-00", "*", "READ", "ALLOW", "TOPIC", "t002.topic-0001", "LITERAL"),  # cross-tenant
    (SOURCE, "User:t003-app-00", "*", "READ", "ALLOW", "TOPIC", "t01", "PREFIXED"),  # covers t010..t019
    (TARGET, "User:*", "*", "DESCRIBE", "ALLOW", "CLUSTER", "kafka-cluster", "LITERAL"),  # wildcard
    (SOURCE, "User:old-app", "*", "READ", "ALLOW", "TOPIC", "t005.", "PREFIXED"),  # stale
    (SOURCE, "User:mm2-t006-dc1-to-cloud1", "*", "READ", "ALLOW", "TOPIC", "t007.", "PREFIXED"),  # MM2 overreach
]


def literal_bindings(spark: SparkSession, count: int) -> DataFrame:
    """`count` LITERAL READ/WRITE bindings of tenants' principals on their own topics (both clusters)."""
    i = F.col("id")
    t = F.format_string("t%03d", i % TENANTS)
    k = (i / TENANTS).cast("long") % PRINCIPALS
    on_target = (i / (TENANTS * PRINCIPALS)).cast("long") % 2 == 1
    topic = F.format_string("%s.topic-%04d", t, (i / (2 * TENANTS * PRINCIPALS)).cast("long") % TOPICS_PER_TENANT)
    return spark.range(count).select(
        F.when(on_target, F.lit(TARGET)).otherwise(F.lit(SOURCE)).alias("cluster"),
        F.format_string("User:%s-app-%02d", t, k).alias("principal"), F.lit("*").alias("host"),
        F.when(on_target, F.lit("READ")).otherwise(F.lit("WRITE")).alias("operation"),
        F.lit("ALLOW").alias("permission"), F.lit("TOPIC").alias("resource_type"),
        F.when(on_target, F.concat(F.lit(f"{SOURCE}."), topic)).otherwise(topic).alias("resource_name"),
        F.lit("LITERAL").alias("pattern_type"))


def topics(spark: SparkSession) -> DataFrame:
    i = F.col("id")
    name = F.format_string("t%03d.topic-%04d", (i / TOPICS_PER_TENANT).cast("long"), i % TOPICS_PER_TENANT)
    source = spark.range(TENANTS * TOPICS_PER_TENANT).select(F.lit(SOURCE).alias("cluster"), name.alias("topic"),
                                                             F.lit(3).alias("partitions"))
    return source.unionByName(source.select(F.lit(TARGET).alias("cluster"),
                                            F.concat(F.lit(f"{SOURCE}."), "topic").alias("topic"), "partitions"))


def snapshot(spark: SparkSession, size: int, work: Path) -> Snapshot:
    """The snapshot at `size` bindings, written to Parquet and read back (as a collector would hand it over)."""
    base = spark.createDataFrame(generated_bindings() + LEAKS, SNAPSHOT_SCHEMAS["acls"])
    acls = base.unionByName(literal_bindings(spark, size - base.count()))
    tables = {"acls": acls, "topics": topics(spark),
              "admin_principals": spark.createDataFrame([(c, "User:admin") for c in (SOURCE, TARGET)],
                                                        SNAPSHOT_SCHEMAS["admin_principals"])}
    frames = {}
    for name, schema in SNAPSHOT_SCHEMAS.items():
        path = work / f"{size}-{name}"
        tables.get(name, spark.createDataFrame([], schema)).write.parquet(str(path))
        frames[name] = spark.read.parquet(str(path))
    return Snapshot(**frames)


def timed(check_id: str, snap: Snapshot, tenancy: Tenancy) -> tuple[float, int]:
    began = time.perf_counter()
    found = CHECKS[check_id].detect(snap, tenancy).cache()
    count = found.count()  # the whole plan runs (cached, so the count is of full rows)
    seconds = time.perf_counter() - began
    found.unpersist()
    return seconds, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="50000,100000,200000")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    began = time.perf_counter()
    spark = spark_session(args.master, "mm2gov-audit-bench")
    start_s = time.perf_counter() - began
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-audit-") as tmp:
        work = Path(tmp)
        write_repo(work / "repo")
        inventory = load_inventory(work / "repo")
        tenancy = build_tenancy(spark, decide(inventory).tenancy, inventory.clusters)
        snapshots = {size: snapshot(spark, size, work) for size in sizes}
        timed("ACL_CROSS_TENANT", snapshots[sizes[0]], tenancy)  # warm-up: JIT, code generation
        results: dict[int, dict[str, tuple[float, int]]] = {}
        for size in sizes:
            results[size] = {check_id: timed(check_id, snapshots[size], tenancy) for check_id in ACL_CHECKS}
    spark.stop()

    print(f"estate: {TENANTS} tenants x {PRINCIPALS} principals, {2 * TENANTS * TOPICS_PER_TENANT:,} topics "
          f"on 2 clusters, {len(LEAKS)} planted leaks; Spark {args.master}, session start {start_s:.1f} s")
    width = max(map(len, ACL_CHECKS))
    print(f"{'bindings':>{width}} " + " ".join(f"{size:>10,}" for size in sizes))
    for check_id in ACL_CHECKS:
        print(f"{check_id:>{width}} " + " ".join(f"{results[s][check_id][0]:>8.1f} s" for s in sizes)
              + "   findings: " + "/".join(str(results[s][check_id][1]) for s in sizes))
    totals = {s: sum(seconds for seconds, _ in results[s].values()) for s in sizes}
    print(f"{'all five':>{width}} " + " ".join(f"{totals[s]:>8.1f} s" for s in sizes)
          + f"   (target < 60 s at {sizes[-1]:,})")
    growth = sizes[-1] / sizes[0]
    first, last = sizes[0], sizes[-1]
    print(f"growth {first:,} -> {last:,} bindings (x{growth:g}): time x{totals[last] / totals[first]:.2f}; "
          f"per 1k bindings {1000 * totals[first] / first:.3f} s -> {1000 * totals[last] / last:.3f} s")


if __name__ == "__main__":
    main()
