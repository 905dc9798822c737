"""Shared fixtures: the real local stack, started once per test session."""

from __future__ import annotations

import functools
import os
import resource
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadFileScheduling

from devstack.stack import Stack, StackSpec
from tests.tools.py4j_reset import drop_thread_connection

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Two Kafka clusters (source, target), OPA with policies/, etcd + kube-apiserver + Strimzi CRDs."""
    running = Stack(StackSpec(run_dir=tmp_path_factory.mktemp("devstack"))).up()
    try:
        yield running
    finally:
        running.down()


@pytest.fixture(scope="session")
def warm_opa(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One OPA for this worker's CLI runs that only need a decision: the URL for `--opa-url` or MM2GOV_OPA_URL.

    A command starts its own OPA otherwise (about 0.4 s more a run: the tests that run a command dozens of
    times use this one; a command's own OPA keeps its tests in test_validate_cli.py and wherever this is not
    asked for). Empty at start: the first command uploads the library, the next ones find it there, and each
    removes the organisation rules it uploaded (policy/opa.py), so runs do not see each other's rules.
    """
    from devstack.opa import OpaServer

    server = OpaServer(tmp_path_factory.mktemp("warm-opa"), log_level="error")
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="module")
def decided_by_warm_opa(warm_opa: str) -> Iterator[str]:
    """For a module: every mm2gov command it runs (in this process or as its own) asks `warm_opa`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MM2GOV_OPA_URL", warm_opa)
        yield warm_opa


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `mm2gov ARGS` in a fresh interpreter, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "governance", *args],
        capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
    )


PUBLIC_KEYS = {"username", "ca.crt", "user.crt"}  # names and certificates: not secret


def secret_values(store: Path) -> set[str]:
    """Every secret value in a directory store (metadata files, names, certificates and binary stores left out)."""
    return {p.read_text() for p in store.rglob("*")
            if p.is_file() and not p.name.startswith(".") and p.name not in PUBLIC_KEYS and p.suffix != ".p12"}


# The slowest modules of `make test` (its 30 slowest durations, 2026-11-25), slowest first. On xdist workers
# the collection is ordered: these, then the other integration modules, then the unit modules; `make test`
# passes --no-loadscope-reorder, so xdist hands modules out in that order (its default is the modules with
# the most tests first, which put these last) and the many short unit modules fill the end of both workers.
# A module missing here only runs later: the order is about the wall time, never about what passes.
# test_audit_cluster comes first, on clusters nothing has written to yet: its audits read every partition of
# both clusters (a Kafka consumer per partition on the executors). After test_migrate's topics its CLI run
# scanned 1,532 records instead of 61 and the standalone cluster's JVMs used 180 CPU-s instead of 113
# (fresh-clone runs, 2026-11-28).
SLOWEST_FIRST = (
    "integration/test_audit_cluster.py", "integration/test_migrate.py", "integration/test_mm2_nodes.py",
    "integration/test_failover.py", "integration/test_probe.py", "integration/test_audit.py",
    "integration/test_mm2_exactly_once.py", "integration/test_quotas.py", "integration/test_mm2_upgrade.py",
    "integration/test_flow_topic_changes.py", "unit/test_audit_checks.py", "integration/test_image_install.py",
    "integration/test_prometheus.py", "integration/test_rotation.py", "integration/test_quota_neighbours.py",
    "integration/test_generate_apply.py", "integration/test_wheel.py", "integration/test_mm2_offset_sync.py",
    "integration/test_admission.py",
)


# The modules whose tests use the worker's SparkSession (the `spark` fixture, or `audit_in_process` on it).
# `make test` hands them to one xdist worker as one unit (_SparkModulesTogether), so one driver JVM starts and
# warms up instead of one on each worker: the three drivers of a fresh-clone run used 211, 206 and 112 CPU-s
# (2026-11-27), much of it each one's class loading and JIT of the same Spark code (test_audit_cluster's local-mode
# reference: a driver of its own used 71 CPU-s, 2026-11-28). A module missing here still
# passes (it starts a driver on its own worker); the collection hook warns about it.
SPARK_MODULES = frozenset({
    "tests/integration/test_migrate.py", "tests/integration/test_audit.py", "tests/integration/test_audit_cluster.py",
    "tests/integration/test_mm2_exactly_once.py", "tests/integration/test_audit_records.py",
    "tests/unit/test_audit_checks.py", "tests/unit/test_audits.py", "tests/unit/test_audit_record_columns.py",
    "tests/unit/test_py4j_reset.py",
})
SPARK_UNIT = "the modules that use the SparkSession"


class _SparkModulesTogether(LoadFileScheduling):
    """xdist's loadfile (a module's tests on one worker, modules handed out in collection order), but the
    SPARK_MODULES are one unit, placed where the first of them is in that order (test_audit_cluster: first)."""

    def _split_scope(self, nodeid: str) -> str:
        module = super()._split_scope(nodeid)
        return SPARK_UNIT if module in SPARK_MODULES else module


def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> LoadFileScheduling | None:
    """On the xdist controller, for `--dist loadfile` (what `make test` passes): _SparkModulesTogether."""
    if config.getvalue("dist") != "loadfile":
        return None
    return _SparkModulesTogether(config, log)


def _schedule_rank(item: pytest.Item) -> tuple[int, int]:
    """(0, its place) for a module of SLOWEST_FIRST (its path under tests/: unit/test_migrate.py is not
    integration/test_migrate.py), then the other integration modules, then the unit ones."""
    module = item.path.relative_to(Path(__file__).parent).as_posix()
    if module in SLOWEST_FIRST:
        return 0, SLOWEST_FIRST.index(module)
    return (1 if "integration" in item.path.parts else 2), 0


@dataclass
class _Span:
    """One module on one worker: from its first test's start to its last one's stop, and the CPU seconds the
    worker used meanwhile (its own and its reaped children's: CLI runs, MM2s, jshell; not the session's
    stack or SparkSession, which live until the end)."""

    start: float
    stop: float
    cpu_before: float
    cpu_after: float


_TIMELINE: dict[str, dict[str, _Span]] = {}  # worker -> module -> span
_WORKER_CPU: dict[str, float] = {}  # worker -> its CPU seconds at its last report


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """On a worker: each report carries the worker's CPU seconds so far, for the controller's timeline. After
    a failed step, this thread's py4j connection is dropped (tests/tools/py4j_reset.py says why)."""
    outcome = yield
    report = outcome.get_result()
    report.user_properties.append(("cpu_seconds", _cpu_seconds()))
    if report.failed:
        drop_thread_connection()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """On the xdist controller: when each worker ran each module, and its CPU (for the timeline)."""
    worker = getattr(getattr(report, "node", None), "gateway", None)
    if worker is None:
        return
    cpu = dict(report.user_properties).get("cpu_seconds", 0.0)
    module = report.nodeid.split("::")[0].removeprefix("tests/")  # unit/x.py and integration/x.py are two
    before = _WORKER_CPU.get(worker.id, 0.0)
    span = _TIMELINE.setdefault(worker.id, {}).setdefault(module, _Span(report.start, report.stop, before, cpu))
    span.start, span.stop, span.cpu_after = min(span.start, report.start), max(span.stop, report.stop), cpu
    _WORKER_CPU[worker.id] = cpu


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Per worker: when it finished and its slow modules with their CPU, so SLOWEST_FIRST can be rebalanced
    from a real run (a worker that idles at the end is wall time lost) and cuts aimed at what costs."""
    if not _TIMELINE:
        return
    begin = min(span.start for modules in _TIMELINE.values() for span in modules.values())
    terminalreporter.section("per-worker timeline (seconds from the first test; CPU seconds of the worker)")
    for worker, modules in sorted(_TIMELINE.items()):
        end = max(span.stop for span in modules.values()) - begin
        slow = [(module, span) for module, span in modules.items() if span.stop - span.start >= 10]
        terminalreporter.write_line(f"{worker}: {len(modules)} modules, last test ended at {end:.0f} s; "
                                    f"those of 10 s or more:")
        for module, span in sorted(slow, key=lambda kv: kv[1].start):
            terminalreporter.write_line(f"  {span.start - begin:6.0f} .. {span.stop - begin:6.0f}  "
                                        f"cpu {span.cpu_after - span.cpu_before:5.0f}  {module}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that start the local SparkSession are marked `spark`: `make test-fast` leaves them out. On xdist
    workers, the slowest modules first (SLOWEST_FIRST says why); a module's tests keep their order."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
            module = item.path.relative_to(REPO_ROOT).as_posix()
            if module not in SPARK_MODULES:
                warnings.warn(f"{module} uses the SparkSession: add it to SPARK_MODULES (tests/conftest.py), "
                              "or its worker starts a Spark driver of its own", stacklevel=1)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=_schedule_rank)  # stable: within a rank, modules and tests stay in collection order


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local[2] SparkSession for every test of this process that asks for it; started on first use only.

    A JVM's jars are fixed at its start and every later SparkSession of the process is this one, so it carries
    Spark's Kafka source whenever setup fetched it (the record-scan tests read with it; the others ignore it).
    """
    from governance import tools
    from spark_audit.run import spark_session
    from tests.tools.spark_conf import QUICK_DRIVER

    try:
        jars = {"spark.jars": ",".join(map(str, tools.spark_kafka_jars()))}
    except tools.MissingTool:  # `make test-unit` before `make setup`: the checks' tests need no Kafka source
        jars = {}
    # Test data is tiny and the JVM short-lived: QUICK_DRIVER (tests/tools/spark_conf.py says why), one
    # partition per shuffle, no generated Java (compiling Spark's code, or the queries', would cost more CPU
    # than running them) and no adaptive re-planning between stages (the unit tests' Spark work fell from
    # about 214 to 189 CPU-s without it). The queries' semantics do not depend on these settings.
    session = spark_session("local[2]", "mm2gov-tests", {
        "spark.sql.shuffle.partitions": "1", "spark.default.parallelism": "1", "spark.sql.adaptive.enabled": "false",
        "spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN", **QUICK_DRIVER,
        **jars})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def audit_in_process(spark) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`mm2gov audit ARGS` through the CLI's own main() in this process, on the session's warm SparkSession
    (tests/tools/in_process.py says why); answers like `run_cli`."""
    from tests.tools.in_process import run_in_process

    return functools.partial(run_in_process, "audit")


@pytest.fixture(scope="session")
def java_oracle() -> Iterator[object]:
    """Kafka's own code as the oracle (oracle/, devstack/oracle.py): one JVM for the whole session."""
    from devstack.oracle import JavaOracle

    with JavaOracle() as oracle:
        yield oracle
