"""A Spark standalone cluster on loopback: one master and N workers, each its own JVM.

Started from pyspark's own distribution (`<pyspark>/bin/spark-class`, the jars pip installed),
as processes this module owns (own process group, log file, stopped by PID; a worker's executors
are its children and stop with it). Ports are chosen free; Spark is told not to move to the next
port on a conflict (`spark.port.maxRetries=0`), so a port taken between choosing and binding
makes the process fail, and the start is retried on new ports. Ready means the master's JSON
(`http://127.0.0.1:<ui>/json/`) lists every worker ALIVE.

    with SparkStandalone(run_dir, workers=2) as cluster:
        ... spark-submit --master {cluster.url} ...

Used by tests and bench only (like the rest of `devstack`).
"""

from __future__ import annotations

import importlib.util
import json
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devstack import tools
from devstack.files import write_public
from devstack.process import (
    LOOPBACK,
    QUICK_JVM,
    DevstackError,
    ManagedProcess,
    ensure_port_free,
    free_port,
    tail,
)

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
BIND_FAILURES = ("BindException", "Address already in use", "Failed to bind", "could not bind")

# The daemons' own logs (INFO, to their log files): what a cluster operator would see.
DAEMON_LOG4J2 = """\
rootLogger.level = info
rootLogger.appenderRef.stdout.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_OUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n%ex
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = warn
"""


def pyspark_home() -> Path:
    """The pip-installed pyspark package: a Spark distribution (bin/, sbin/, jars/)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        raise tools.MissingTool("pyspark not installed: pip install 'mm2gov[audit]'")
    home = Path(spec.origin).parent
    if not (home / "bin" / "spark-class").is_file():
        raise tools.MissingTool(f"{home} has no bin/spark-class: not a pyspark distribution")
    return home


def spark_submit() -> Path:
    return pyspark_home() / "bin" / "spark-submit"


def java_home() -> Path:
    """JAVA_HOME for Spark's scripts: the directory above bin/java of the Java mm2gov found."""
    return tools.java().resolve().parents[1]


@dataclass
class SparkStandalone:
    """A standalone master and `workers` workers (`cores` and `memory` each) on 127.0.0.1."""

    run_dir: Path
    workers: int = 2
    cores: int = 1
    memory: str = "1g"  # what a worker offers its executors
    daemon_memory: str = "256m"  # heap of the master and worker JVMs themselves
    master_port: int = 0
    ui_port: int = 0
    master: ManagedProcess | None = None
    worker_processes: list[ManagedProcess] = field(default_factory=list)
    start_attempts: int = 5

    @property
    def url(self) -> str:
        return f"spark://{LOOPBACK}:{self.master_port}"

    @property
    def ui_url(self) -> str:
        return f"http://{LOOPBACK}:{self.ui_port}"

    @property
    def conf_dir(self) -> Path:
        return self.run_dir / "conf"

    def env(self) -> dict[str, str]:
        """The environment of Spark's scripts and daemons (and so of the executors they start)."""
        return {
            "SPARK_HOME": str(pyspark_home()),
            "JAVA_HOME": str(java_home()),
            "SPARK_LOCAL_IP": LOOPBACK,
            "SPARK_CONF_DIR": str(self.conf_dir),
            "SPARK_DAEMON_MEMORY": self.daemon_memory,
            "SPARK_DAEMON_JAVA_OPTS": " ".join(QUICK_JVM),  # the master and workers only schedule
            "SPARK_LOG_DIR": str(self.run_dir / "logs"),
            # fail on a taken port instead of silently taking the next one: the start retries
            "SPARK_MASTER_OPTS": "-Dspark.port.maxRetries=0",
            "SPARK_WORKER_OPTS": "-Dspark.port.maxRetries=0",
        }

    # -- lifecycle ---------------------------------------------------------
    def start(self, timeout: float = 90) -> SparkStandalone:
        """Start the master (again on new ports if one it was given free was taken meanwhile), then
        the workers; return once every worker is ALIVE. On any failure, stop what started and raise."""
        write_public(self.conf_dir / "log4j2.properties", DAEMON_LOG4J2.encode())
        fixed = (self.master_port, self.ui_port)  # ports asked for are never swapped for others
        try:
            for attempt in range(1, self.start_attempts + 1):
                try:
                    self._start_master(timeout)
                    break
                except _PortTaken:
                    self._stop_master()
                    if attempt == self.start_attempts or all(fixed):
                        raise DevstackError(f"spark master: port {self.master_port} or {self.ui_port} taken "
                                            f"({attempt} tries)") from None
                    self.master_port, self.ui_port = fixed
            for index in range(self.workers):
                self._start_worker(index)
            self._wait(lambda: self.alive_workers() == self.workers, timeout,
                       f"{self.workers} ALIVE workers in {self.ui_url}/json/")
        except BaseException:
            self.stop()
            raise
        return self

    def _start_master(self, timeout: float) -> None:
        chosen = {"spark master": not self.master_port, "spark master UI": not self.ui_port}
        self.master_port = self.master_port or free_port()
        self.ui_port = self.ui_port or free_port()
        for what, port in (("spark master", self.master_port), ("spark master UI", self.ui_port)):
            try:
                ensure_port_free(port, what)
            except DevstackError:
                if chosen[what]:  # free a moment ago: someone took it, choose again
                    raise _PortTaken() from None
                raise
        self.master = ManagedProcess(
            name="spark-master",
            argv=[str(pyspark_home() / "bin" / "spark-class"), MASTER_CLASS, "--host", LOOPBACK,
                  "--port", str(self.master_port), "--webui-port", str(self.ui_port)],
            log_path=self.run_dir / "master" / "master.log", cwd=self.run_dir, env=self.env())
        log_start = self.master.log_path.stat().st_size if self.master.log_path.exists() else 0
        self.master.start()

        def port_taken() -> bool:  # in this attempt's part of the (appended) log
            with open(self.master.log_path, "rb") as log:
                log.seek(log_start)
                text = log.read().decode(errors="replace")
            return any(failure in text for failure in BIND_FAILURES)

        def ready() -> bool:
            if port_taken():
                raise _PortTaken()
            return self.state().get("url") == self.url

        self._wait(ready, timeout, f"{self.ui_url}/json/ naming {self.url}", self.master, port_taken)

    def work_dir(self, index: int) -> Path:
        """Where worker `index` runs its executors: <app id>/<executor id>/ with the jars they fetched."""
        return self.run_dir / f"worker-{index}" / "work"

    def _start_worker(self, index: int) -> None:
        home = self.run_dir / f"worker-{index}"
        work = self.work_dir(index)
        work.mkdir(parents=True, exist_ok=True)
        worker = ManagedProcess(
            name=f"spark-worker-{index}",
            # port 0: the worker's RPC and UI ports are chosen by the OS, nothing to collide with
            argv=[str(pyspark_home() / "bin" / "spark-class"), WORKER_CLASS, self.url, "--host", LOOPBACK,
                  "--port", "0", "--webui-port", "0", "--cores", str(self.cores), "--memory", self.memory,
                  "--work-dir", str(work)],
            log_path=home / "worker.log", cwd=home, env=self.env())
        self.worker_processes.append(worker)
        worker.start()

    def _wait(self, probe, timeout: float, what: str, process: ManagedProcess | None = None,
              port_taken=None) -> None:
        deadline = time.monotonic() + timeout
        while True:
            for proc in [process] if process else [self.master, *self.worker_processes]:
                code = proc.exit_code() if proc else None
                if code is not None:
                    if port_taken and port_taken():
                        raise _PortTaken()
                    raise DevstackError(f"{proc.name} exited with code {code} while starting; "
                                        f"last lines of {proc.log_path}:\n{tail(proc.log_path)}")
            try:
                if probe():
                    return
            except _PortTaken:
                raise
            except Exception:  # noqa: BLE001 - not up yet
                pass
            if time.monotonic() > deadline:
                logs = "\n".join(f"{p.log_path}:\n{tail(p.log_path, 10)}"
                                 for p in [self.master, *self.worker_processes] if p)
                raise DevstackError(f"spark standalone cluster not ready ({what}) within {timeout:.0f}s\n{logs}")
            time.sleep(0.3)

    def state(self) -> dict[str, Any]:
        """The master's JSON status: url, status, aliveworkers, workers, activeapps, completedapps..."""
        with urllib.request.urlopen(f"{self.ui_url}/json/", timeout=5) as response:
            return json.loads(response.read())

    def alive_workers(self) -> int:
        state = self.state()
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def pids(self) -> dict[str, int]:
        return {p.name: p.pid for p in [self.master, *self.worker_processes] if p and p.pid}

    def stop(self) -> None:
        """Workers (and their executors) first, together, then the master; each by its PID's process group."""
        with ThreadPoolExecutor(max_workers=max(len(self.worker_processes), 1)) as pool:
            list(pool.map(ManagedProcess.stop, self.worker_processes))
        self.worker_processes = []
        self._stop_master()

    def _stop_master(self) -> None:
        if self.master is not None:
            self.master.stop()
            self.master = None

    def __enter__(self) -> SparkStandalone:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


class _PortTaken(Exception):
    """A port chosen free was taken before the master bound it."""


# -- what ran where: Spark's event log ---------------------------------------------------------


def event_log_conf(folder: Path) -> dict[str, str]:
    """Settings that make an application write its event log (plain JSON lines) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    return {"spark.eventLog.enabled": "true", "spark.eventLog.dir": folder.resolve().as_uri(),
            "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"}


def read_event_logs(folder: Path) -> list[list[dict[str, Any]]]:
    """The events of every finished application that logged into `folder` (one list per application)."""
    logs = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.endswith(".inprogress"))
    return [[json.loads(line) for line in path.read_text().splitlines() if line.strip()] for path in logs]


@dataclass(frozen=True)
class StageTasks:
    """The successful tasks of one stage: how many ran on each executor."""

    stage_id: int
    job_description: str
    executors: dict[str, int]  # executor id -> tasks

    @property
    def tasks(self) -> int:
        return sum(self.executors.values())


def stages_of_jobs(events: list[dict[str, Any]], description_prefix: str) -> list[StageTasks]:
    """Every stage of the jobs whose description (`SparkContext.setJobDescription`) starts with
    `description_prefix`, with the executor of each of its successful tasks."""
    described: dict[int, str] = {}
    for event in events:
        if event.get("Event") == "SparkListenerJobStart":
            description = (event.get("Properties") or {}).get("spark.job.description") or ""
            if description.startswith(description_prefix):
                described.update({stage: description for stage in event.get("Stage IDs", [])})
    executors: dict[int, dict[str, int]] = {stage: {} for stage in described}
    for event in events:
        if (event.get("Event") == "SparkListenerTaskEnd" and event.get("Stage ID") in described
                and (event.get("Task End Reason") or {}).get("Reason") == "Success"):
            executor = event["Task Info"]["Executor ID"]
            counts = executors[event["Stage ID"]]
            counts[executor] = counts.get(executor, 0) + 1
    return [StageTasks(stage, described[stage], counts) for stage, counts in sorted(executors.items()) if counts]


def executors_added(events: list[dict[str, Any]]) -> set[str]:
    return {event["Executor ID"] for event in events if event.get("Event") == "SparkListenerExecutorAdded"}
