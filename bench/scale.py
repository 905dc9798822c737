"""Benchmark: how every command on the pull-request and apply paths grows with the estate (issue 26).

At each size (default 500, 1,000, 2,000 and 5,000 tenants x 3 flows; `--sizes`), end to end as a user runs
them (a fresh `mm2gov` process each, OPA started by mm2gov):
- `validate --format json` on the estate with five planted violations (PLANTED: overlapping and colliding
  prefixes, a shared principal, a shared namespace, a remote prefix in another tenant's: the policy's
  pairwise rules find them through indexes, at every size), and `plan --format json` against a base where
  every 100th tenant lacks its reader principal and one topic pattern (so the plan grows with the estate);
- `generate`, then the same bytes written again from memory in this process into a fresh folder (the floor:
  what writing the output costs without computing it), then generate's steps timed one by one in a process
  of their own (bench/generate_phases.py: importing, loading, OPA's decision, compiling, rendering and
  writing; its files checked to be the same): what of generate's time no rendering change can remove;
- `apply --dry-run` (its text: one line per change) against real brokers: the local stack's Kafka clusters
  (devstack), one per cluster alias of the repo, as they start (nothing applied yet: the plan creates
  everything);
- the audit's ACL checks (spark_audit.checks.ACL_CHECKS) on local[2], in process: the tenancy of the same
  estate and a snapshot holding exactly what `generate` writes for it (its ACL bindings), one topic per
  tenant and cluster, and the planted leaks of bench/audit.py; seconds of the checks only (Spark started and
  the snapshot written beforehand).

mm2gov runs from bytecode, as an installed one does (`compile_bytecode`, before the first measurement).
Each prints seconds, the peak memory of the process and its children (mm2gov, its OPA and its forked
rendering workers, or this process and Spark's JVM for the audit; proportional set size, so pages a worker
shares with its parent count once; sampled from /proc every 50 ms in a second run of the same command, or a
second round of the checks: the sampler costs CPU the timed run must not lose), output bytes (what the
command prints, or writes for generate; findings for the audit) and, per command, the growth exponent fitted
over the sizes
(least squares of log seconds on log tenants: 1.0 is linear; fixed costs such as starting Python and OPA
pull it below 1 at small sizes, so the slope between the two largest sizes is printed beside it). Targets
(issue 26): exponents <= 1.15; generate within 2x of writing its bytes from memory; 1,000 tenants:
generate, validate, plan < 5 s; 5,000 tenants: each < 30 s; output bytes per tenant constant.

Usage: python bench/scale.py [--sizes 500,1000,2000,5000] [--commands validate,plan,generate,apply,audit]
                             [--work-dir DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

REPO_ROOT = Path(__file__).resolve().parents[1]
# Run as a script, Python puts bench/ first on the path, where a module may shadow the stdlib's
# (bench/secrets.py shadows `secrets`): import from the repo root instead.
sys.path[:] = [str(REPO_ROOT), *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent)]

import yaml  # noqa: E402

from governance.files import YAML_DUMPER  # noqa: E402

CLUSTERS = ("dc1", "dc2", "cloud1")
PAIRS = (("dc1", "cloud1"), ("dc1", "dc2"), ("dc2", "cloud1"))
COMMANDS = ("validate", "plan", "generate", "apply", "audit")
CHANGED_EVERY = 100  # the plan's base: every 100th tenant without its reader and one topic pattern
PAGE = os.sysconf("SC_PAGE_SIZE")


def clusters_yaml() -> str:
    return yaml_text({"clusters": {name: {"bootstrap_servers": f"{name}.example:9093", "zone": "onprem",
                                          "security": {"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512"}}
                                   for name in CLUSTERS}})


def yaml_text(document: object) -> str:
    return yaml.dump(document, Dumper=YAML_DUMPER, sort_keys=False)


# The validate bench's repo also holds a few violations (the same five at every size), so the policy's
# paths that find overlapping prefixes, colliding names and shared principals run too: tenant -> what it
# adds (extra topic prefixes, an extra principal, its namespace).
PLANTED = {
    "t0001": {"prefixes": ["t0002.x."]},  # prefix_overlap with t0002
    "t0003": {"prefixes": ["t0004_"]},  # prefix_collision with t0004 ('.' against '_')
    "t0005": {"principal": "User:t0006-app"},  # principal_in_two_tenants, derived_name_collision (its secrets)
    "t0007": {"namespace": "t0008"},  # derived_name_collision (namespace)
    "t0009": {"prefixes": ["dc1.t0010."]},  # remote_topic_in_foreign_prefix (t0010's flows from dc1)
}


def write_repo(root: Path, tenants: int, clusters: str, base: bool = False, planted: bool = False) -> Path:
    """bench/policy.py's tenant shape (two principals, topic and group patterns, a read grant to the next
    tenant), three flows each; `base`: every CHANGED_EVERY-th tenant lacks its reader and a topic pattern;
    `planted`: the PLANTED violations too."""
    (root / "tenants").mkdir(parents=True)
    (root / "clusters.yaml").write_text(clusters)
    for i in range(tenants):
        name, changed = f"t{i:04d}", base and i % CHANGED_EVERY == 0
        extra = PLANTED.get(name, {}) if planted else {}
        topics = [rf"{name}\.orders.*"] if changed else [rf"{name}\.orders.*", rf"{name}\.events"]
        principals = [{"name": f"User:{name}-app", "access": ["read", "write"]}]
        if not changed:
            principals.append({"name": f"User:{name}-reader", "access": ["read"]})
        if "principal" in extra:
            principals.append({"name": extra["principal"], "access": ["read"]})
        tenant = {"name": name, "owners": [f"{name}@example.com"], "classification": "internal",
                  **({"namespace": extra["namespace"]} if "namespace" in extra else {}),
                  "topic_prefixes": [f"{name}.", *extra.get("prefixes", [])], "group_prefixes": [f"{name}-"],
                  "principals": principals,
                  "flows": [{"source": source, "target": target, "topics": list(topics), "groups": [f"{name}-.*"]}
                            for source, target in PAIRS],
                  "grants": [{"to": f"t{(i + 1) % tenants:04d}", "topics": [f"{name}.public."], "access": ["read"]}]}
        (root / "tenants" / f"{name}.yaml").write_text(yaml_text(tenant))
    return root


# -- measuring ---------------------------------------------------------------------------------------------------

def _memory(pid: int) -> int:
    """The proportional set size of `pid` (PSS: its private pages, and its share of pages it shares, such as
    a forked worker's with its parent), else its resident size; 0 for a process that is gone."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (FileNotFoundError, ProcessLookupError):
        return 0


def _tree_rss(pid: int) -> int:
    """Memory of `pid` and its descendants (`_memory` of each: shared pages counted once)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        total += _memory(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return total


class PeakRss:
    """The peak of `_tree_rss(pid)`, sampled every 50 ms in a thread while the block runs."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak = pid, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, _tree_rss(self.pid))
            self._done.wait(0.05)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._done.set()
        self._thread.join()


@dataclass
class Run:
    seconds: float
    peak_bytes: int
    output_bytes: int
    note: str = ""


def mm2gov(*args: str, ok: Sequence[int] = (0,), between: Callable[[], None] | None = None) -> Run:
    """`mm2gov ARGS` in a fresh process, twice: timed alone (wall seconds, stdout bytes), then again under
    PeakRss for the peak memory of it, its OPA and its workers (`between` runs in between, e.g. to empty an
    output folder). The sampler reads every page of every process's memory 20 times a second: a share of
    a core on 2, which slowed the command it measured (generate at 5,000 tenants: about 26.7 s alone, 30.6
    under the sampler, 2026-11-29), so it never runs beside the timed run."""
    def run(sampled: bool) -> tuple[float, int, bytes]:
        began = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "governance", "--log-level", "warning", *args],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO_ROOT)
        with PeakRss(process.pid) if sampled else contextlib.nullcontext() as rss:
            out, err = process.communicate()
        if process.returncode not in ok:
            raise SystemExit(f"mm2gov {args[0]} failed ({process.returncode}): {err.decode()[-3000:]}")
        return time.perf_counter() - began, rss.peak if rss else 0, out

    seconds, _, out = run(sampled=False)
    if between is not None:
        between()
    return Run(seconds, run(sampled=True)[1], len(out))


def folder_bytes(root: Path) -> dict[Path, bytes]:
    return {path.relative_to(root): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def compile_bytecode() -> None:
    """Compile mm2gov's modules and its environment's to bytecode, as installing them does (pip, and uv with
    --compile-bytecode; any Python writes it on first import otherwise). Where PYTHONDONTWRITEBYTECODE is set
    (as on the project's machine) and nothing compiled them, every `mm2gov` process would compile every
    module it imports from source again: about half a second of CPU per command, measured as its own."""
    import sysconfig

    paths = [str(REPO_ROOT / "governance"), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", *dict.fromkeys(paths)], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Phases(TypedDict):
    """What bench/generate_phases.py prints."""

    steps: dict[str, float]  # seconds of each step, in order
    before_rendering: float  # seconds of importing, loading and the decision together


def generate_phases(repo: Path, out: Path, expected: dict[Path, bytes]) -> Phases:
    """The seconds of each step of one generate and of those before rendering (bench/generate_phases.py, a
    fresh process), its files checked to be `expected` (the end-to-end run's)."""
    done = subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "generate_phases.py"), str(repo), str(out)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench/generate_phases.py failed ({done.returncode}): {done.stderr[-3000:]}")
    if folder_bytes(out) != expected:
        raise SystemExit("bench/generate_phases.py wrote other files than mm2gov generate")
    shutil.rmtree(out)
    phases: Phases = json.loads(done.stdout)
    return phases


def write_from_memory(files: dict[Path, bytes], into: Path) -> float:
    """Seconds to write `files` under `into` (folders made as needed): the floor under generate."""
    began = time.perf_counter()
    made: set[Path] = set()
    for relative, data in files.items():
        path = into / relative
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_bytes(data)
    return time.perf_counter() - began


# -- the commands ------------------------------------------------------------------------------------------------

def bench_validate(work: Path, tenants: int) -> Run:
    repo = write_repo(work / "planted", tenants, clusters_yaml(), planted=True)
    return mm2gov("validate", str(repo), "--format", "json", ok=(1,))


def bench_plan(work: Path, tenants: int) -> Run:
    head = write_repo(work / "head", tenants, clusters_yaml())
    base = write_repo(work / "base", tenants, clusters_yaml(), base=True)
    return mm2gov("plan", str(head), "--base", str(base), "--format", "json")


def bench_generate(work: Path, tenants: int) -> Run:
    head = write_repo(work / "head", tenants, clusters_yaml())
    run = mm2gov("generate", str(head), "--out", str(work / "out"), between=lambda: shutil.rmtree(work / "out"))
    files = folder_bytes(work / "out")
    floor = min(write_from_memory(files, work / f"floor{k}") for k in range(2))
    run.output_bytes = sum(map(len, files.values()))
    phases = generate_phases(head, work / "phases-out", files)
    run.note = (f"{len(files)} files; the same bytes from memory {floor:.2f} s: generate is "
                f"{run.seconds / floor:.1f}x that. Its steps, in a run of their own: "
                + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in phases["steps"].items())
                + f"; importing, loading and OPA's decision alone are {phases['before_rendering'] / floor:.1f}x"
                " the floor")
    for k in range(2):
        shutil.rmtree(work / f"floor{k}")
    return run


class Brokers:
    """The local stack's Kafka clusters, one per alias in CLUSTERS, started once for every size."""

    def __init__(self, work: Path) -> None:
        from devstack.stack import Stack, StackSpec

        print(f"starting {len(CLUSTERS)} Kafka clusters (devstack)...", flush=True)
        self.stack = Stack(StackSpec(run_dir=work / "stack", components=("kafka",), kafka_clusters=CLUSTERS)).up()
        self.secrets = work / "secrets"
        self.stack.export_secret_store(self.secrets)

    def apply(self, work: Path, tenants: int) -> Run:
        repo = write_repo(work / "apply-repo", tenants, self.stack.governance_clusters())
        return mm2gov("apply", str(repo), "--dry-run", "--secrets-dir", str(self.secrets))

    def close(self) -> None:
        self.stack.down()


def leaks() -> list[tuple[str, ...]]:
    """bench/audit.py's five planted leaks, in this estate's names: a cross-tenant LITERAL read, a prefix
    without separator (covers t0010..t0019), a `User:*` binding, a stale principal, an MM2 reading another
    tenant's prefix."""
    from governance.model.names import flow_id, mm2_principal

    mm2 = mm2_principal(flow_id("t0006", "dc1", "cloud1"))
    return [("dc1", "User:t0001-app", "*", "READ", "ALLOW", "TOPIC", "t0002.orders", "LITERAL"),
            ("dc1", "User:t0003-app", "*", "READ", "ALLOW", "TOPIC", "t001", "PREFIXED"),
            ("cloud1", "User:*", "*", "DESCRIBE", "ALLOW", "CLUSTER", "kafka-cluster", "LITERAL"),
            ("dc1", "User:old-app", "*", "READ", "ALLOW", "TOPIC", "t0005.", "PREFIXED"),
            ("dc1", mm2, "*", "READ", "ALLOW", "TOPIC", "t0007.", "PREFIXED")]


class Audit:
    """A Spark session (local[2]) for the ACL checks, started once for every size."""

    def __init__(self) -> None:
        from spark_audit.run import spark_session

        print("starting Spark (local[2])...", flush=True)
        self.spark = spark_session("local[2]", "mm2gov-scale-bench")
        self.warm = False

    def checks(self, work: Path, tenants: int) -> Run:
        from governance.compile.acls import desired_bindings
        from governance.config import load_inventory
        from governance.policy.decide import decide
        from spark_audit.checks import ACL_CHECKS, CHECKS
        from spark_audit.model import SNAPSHOT_SCHEMAS, Snapshot
        from spark_audit.tenancy import build_tenancy

        inventory = load_inventory(write_repo(work / "head", tenants, clusters_yaml()))
        decision = decide(inventory)
        tenancy = build_tenancy(self.spark, decision.tenancy, inventory.clusters)
        acls = [(cluster, b.principal, b.host, b.operation, b.permission, b.resource_type, b.resource_name,
                 b.pattern_type) for cluster, items in sorted(desired_bindings(decision.tenancy).items())
                for b in sorted(items)]
        topics = [(cluster, f"t{i:04d}.orders", 3) for i in range(tenants) for cluster in CLUSTERS[:2]]
        tables = {"acls": acls + leaks(), "topics": topics,
                  "admin_principals": [(cluster, "User:admin") for cluster in CLUSTERS]}
        frames = {}
        for name, schema in SNAPSHOT_SCHEMAS.items():
            path = work / "snapshot" / name
            self.spark.createDataFrame(tables.get(name, []), schema).write.parquet(str(path))
            frames[name] = self.spark.read.parquet(str(path))
        snapshot = Snapshot(**frames)
        if not self.warm:  # the first plans of a session pay for the JIT and code generation: once, untimed,
            for check_id in ACL_CHECKS:  # every check (warming only the first left the others' at the first size)
                CHECKS[check_id].detect(snapshot, tenancy).count()
            tenancy = build_tenancy(self.spark, decision.tenancy, inventory.clusters)  # what it memoized: gone
            self.warm = True
        found, each = 0, []  # each check's seconds: where the audit's time goes at this size
        began = time.perf_counter()
        for check_id in ACL_CHECKS:
            started = time.perf_counter()
            found += CHECKS[check_id].detect(snapshot, tenancy).count()
            each.append(f"{check_id} {time.perf_counter() - started:.2f} s")
        seconds = time.perf_counter() - began
        with PeakRss(os.getpid()) as rss:  # memory from a second round: never the sampler beside the timed one
            again = sum(CHECKS[check_id].detect(snapshot, tenancy).count() for check_id in ACL_CHECKS)
        assert again == found, (again, found)
        return Run(seconds, rss.peak, found, f"{len(acls):,} bindings, {found} findings; {', '.join(each)}")

    def close(self) -> None:
        self.spark.stop()


# -- the table ---------------------------------------------------------------------------------------------------

def exponent(sizes: Sequence[int], values: Sequence[float]) -> float:
    """The slope of log(value) on log(size), least squares: 1.0 grows linearly, 2.0 with the square."""
    xs, ys = [math.log(s) for s in sizes], [math.log(max(v, 1e-9)) for v in values]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def table(results: dict[str, dict[int, Run]], sizes: Sequence[int]) -> None:
    head = f"{'tenants x 3 flows':24}" + "".join(f"{s:>12,}" for s in sizes) + "   exponent   last two"
    print("\n" + head)
    rows: list[tuple[str, Callable[[Run], float], Callable[[float], str]]] = [
        ("seconds", lambda r: r.seconds, lambda v: f"{v:10.2f} s"),
        ("peak memory", lambda r: r.peak_bytes, lambda v: f"{v / 2**20:9.0f} MB"),
        ("output", lambda r: r.output_bytes, lambda v: f"{v / 1e6:9.2f} MB"),
    ]
    for command, runs in results.items():
        done = [s for s in sizes if s in runs]
        for label, value, shown in rows:
            if command == "audit" and label == "output":
                label, shown = "findings", lambda v: f"{v:12.0f}"
            cells = "".join(shown(value(runs[s])) if s in runs else f"{'':>12}" for s in sizes)
            fit = f"{exponent(done, [value(runs[s]) for s in done]):9.2f}" if len(done) > 1 else ""
            if len(done) > 2:  # the slope between the two largest sizes: where a superlinear term shows first
                fit += f"{exponent(done[-2:], [value(runs[s]) for s in done[-2:]]):11.2f}"
            print(f"{command + ' ' + label:24}{cells}{fit}")
        if command == "generate":
            print(f"{'generate bytes/tenant':24}" + "".join(
                f"{runs[s].output_bytes / s:>12,.0f}" if s in runs else f"{'':>12}" for s in sizes))
        for s in done:
            if runs[s].note:
                print(f"    {command} at {s:,}: {runs[s].note}")


def measure(results: dict[str, dict[int, Run]], command: str, bench: Callable[[Path, int], Run],
            sizes: Sequence[int], tmp: Path) -> None:
    """`bench` at every size, each in a folder of its own (removed after)."""
    for size in sizes:
        work = tmp / f"{command}-{size}"
        work.mkdir()
        run = results[command][size] = bench(work, size)
        print(f"{command:>9} {size:>6,} tenants: {run.seconds:7.2f} s, peak {run.peak_bytes / 2**20:6.0f} MB, "
              f"output {run.output_bytes:,}{'  ' + run.note if run.note else ''}", flush=True)
        shutil.rmtree(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="500,1000,2000,5000")
    parser.add_argument("--commands", default=",".join(COMMANDS))
    parser.add_argument("--work-dir", type=Path, default=Path("/dev/shm") if Path("/dev/shm").is_dir() else None,
                        help="where repos, outputs (and the stack) go; default /dev/shm (memory), so a disk "
                             "shared with other work does not decide the figures")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    commands = [c for c in COMMANDS if c in args.commands.split(",")]
    results: dict[str, dict[int, Run]] = {c: {} for c in commands}
    if args.work_dir is not None:
        args.work_dir.mkdir(parents=True, exist_ok=True)  # a folder the user names is made, not a traceback
    print(f"work dir: {args.work_dir or tempfile.gettempdir()}", flush=True)
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="mm2gov-bench-scale-", dir=args.work_dir) as tmp:
        # the pull-request path first, with no broker or Spark JVM running beside it
        for command, bench in (("validate", bench_validate), ("plan", bench_plan), ("generate", bench_generate)):
            if command in commands:
                measure(results, command, bench, sizes, Path(tmp))
        if "apply" in commands:
            brokers = Brokers(Path(tmp))
            try:
                measure(results, "apply", brokers.apply, sizes, Path(tmp))
            finally:
                brokers.close()
        if "audit" in commands:
            audit = Audit()
            try:
                measure(results, "audit", audit.checks, sizes, Path(tmp))
            finally:
                audit.close()
    table(results, sizes)


if __name__ == "__main__":
    main()
