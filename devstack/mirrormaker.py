"""MirrorMaker 2 in dedicated mode, run from a properties file as upstream does.

The class path is mm2gov's per-flow replication policy (replication-policy/, built at setup by
install/replication-policy.sh), then Kafka's libs: a flow's file names
`io.mm2gov.replication.FlowReplicationPolicy` (or the identity one) as `replication.policy.class`.
`kafka_version="3"` runs the MM2 of the last Kafka 3.x release (KAFKA3_VERSION, install/kafka3.sh) instead
of the pinned 4.x, with the same policy jar (built against 4.x, using only the KIP-690 API 3.x has): the
MM2 a flow is rolled from in the version-upgrade test, and a legacy shared MM2 in the migration test. An exact
release of `tools.mm2_boundary_versions()` ("3.0.2", "3.1.1": install/legacy-mm2.sh) runs that release's MM2, either
side of the oldest one admission accepts, with the same policy jar: the version-boundary test.

Several nodes of one flow (`node` 0, 1, ...) are several JVMs on the same properties file, each in its own home
(log, log directory), as the file's comment says to run it. Nothing in the file differs per node: a flow run by
several nodes turns on MM2's internal REST server with `listeners=http://127.0.0.1:0` (model/mm2_settings.py),
so each node's JVM binds a port of its own that the kernel picks free (no choice to race, no bind to retry) and
advertises it to its peers; `rest_address` reads that address back from the node's log, where MM2 states it.
MirrorMaker's command line takes nothing but the file and `--clusters`: on one host nothing needs to differ.
"""

from __future__ import annotations

import os
import re
import signal
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from devstack import tools
from devstack.cds import ClassArchive
from devstack.files import write_public
from devstack.kafka import JVM_OPTS, LOG4J2
from devstack.process import LOOPBACK, ManagedProcess, ensure_port_free, free_port
from governance.compile.mm2 import SCRAM_MODULE, Entry, jaas_quoted, render
from governance.compile.mm2_logging import LOG_DIR_PROPERTY
from governance.model.mm2_settings import PLUGIN_DISCOVERY

MAIN_CLASS = "org.apache.kafka.connect.mirror.MirrorMaker"
STARTED_LINE = "Kafka MirrorMaker started"
ADVERTISED = re.compile(rb"Advertised URI: https?://([^/\s]+)/")  # RestServer's line: MM2's internal REST address
KafkaMajor = Literal["4", "3"]
# a KafkaMajor, or an exact release of tools.mm2_boundary_versions() (the version-boundary test's older MM2s)
Mm2Kafka = KafkaMajor | str


@dataclass
class MirrorMaker:
    """One dedicated MM2 process (`name` is the flow id) reading `properties`; `node` tells apart the JVMs of a
    flow run by several (0: the only one, or the first)."""

    name: str
    properties: Path
    run_dir: Path
    node: int = 0
    metrics_config: Path | None = None  # a Prometheus JMX exporter config: serve /metrics when given
    metrics_port: int = 0
    kafka_version: Mm2Kafka = "4"  # "3": KAFKA3_VERSION's MM2 instead of the pinned 4.x; "3.0.2": that release's
    log4j_config: Path | None = None  # a log4j2 properties file (`generate`'s mm2/logging/); else plain text
    jvm_options: tuple[str, ...] = tuple(JVM_OPTS)  # the stack's small heap and quick JIT; a bench may pass others
    process: ManagedProcess | None = None
    _log_start: int = 0  # the log is appended to across runs: readiness looks past this offset only

    @property
    def process_name(self) -> str:
        """`mm2-<flow>` for node 0 (as before nodes existed), `mm2-<flow>-node<n>` for the others."""
        return f"mm2-{node_key(self.name, self.node)}"

    @property
    def home(self) -> Path:
        return self.run_dir / self.process_name

    @property
    def log_path(self) -> Path:
        return self.home / "mm2.log"

    def start(self, timeout: float = 120) -> None:
        java = tools.java()
        classpath = mm2_classpath(self.kafka_version)
        log4j = self.log4j_config or self.home / "log4j2.properties"
        if self.log4j_config is None:
            write_public(log4j, LOG4J2.encode())
        agent = []
        if self.metrics_config is not None:
            self.metrics_port = self.metrics_port or free_port()
            ensure_port_free(self.metrics_port, f"{self.process_name} metrics")
            agent = [f"-javaagent:{tools.jmx_exporter_agent()}={LOOPBACK}:{self.metrics_port}:{self.metrics_config}"]
        archive = ClassArchive.of(classpath, MAIN_CLASS, self.jvm_options)
        self.process = ManagedProcess(
            name=self.process_name,
            argv=[
                str(java), *self.jvm_options, *archive.options(), *agent, f"-Dlog4j2.configurationFile={log4j}",
                f"-D{LOG_DIR_PROPERTY}={self.home}",
                "-cp", classpath, MAIN_CLASS, str(self.properties),
            ],
            log_path=self.log_path,
            cwd=self.home,
            after_exit=archive.keep,
        )
        self._log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        self.process.start()
        self.process.wait_ready(self._started, timeout, f"'{STARTED_LINE}' in its log")

    def _started(self) -> bool:
        with open(self.log_path, "rb") as log:
            log.seek(self._log_start)
            return STARTED_LINE.encode() in log.read()

    @property
    def rest_address(self) -> str | None:
        """`host:port` of this run's internal REST server as MM2 advertises it to its peers (the start of its
        Connect worker id, `<host>:<port>/<source>-><target>`); None without the server (one node, at least once)."""
        with open(self.log_path, "rb") as log:
            log.seek(self._log_start)
            found = ADVERTISED.search(log.read())
        return found.group(1).decode() if found else None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def metrics_url(self) -> str | None:
        return f"http://{LOOPBACK}:{self.metrics_port}/metrics" if self.metrics_config else None

    def metrics(self) -> str:
        """The exporter's /metrics text (Prometheus exposition format)."""
        assert self.metrics_url, "started without a metrics config"
        with urllib.request.urlopen(self.metrics_url, timeout=10) as response:
            return response.read().decode()

    def stop(self) -> None:
        if self.process:
            self.process.stop()

    def kill(self, timeout: float = 20) -> None:
        """SIGKILL by PID, as a crash: no shutdown hook, no offset flush, no transaction ended; then reap it."""
        if self.process and self.process.popen:
            os.kill(self.process.popen.pid, signal.SIGKILL)
            self.process.popen.wait(timeout)
            self.process.reap()


def node_key(flow_id: str, node: int) -> str:
    """How the stack names one node of a flow's MM2: the flow id for node 0, `<flow>-node<n>` for the others."""
    return flow_id if node == 0 else f"{flow_id}-node{node}"


def mm2_classpath(kafka_version: Mm2Kafka = "4") -> str:
    """The replication policy's jar before Kafka's libs, the pinned 4.x's, (`"3"`) the last 3.x release's or an
    exact boundary release's (MissingTool, with the remedy, when either is absent)."""
    return f"{tools.replication_policy_jar()}:{mm2_distribution(kafka_version).classpath}"


def mm2_distribution(kafka_version: Mm2Kafka = "4") -> tools.KafkaDistribution:
    if kafka_version == "4":
        return tools.kafka()
    if kafka_version == "3":
        return tools.kafka3()
    return tools.legacy_mm2(kafka_version)  # ValueError unless versions.env pins it


def dedicated_properties(
    flow_id: str,
    clusters: dict[str, dict[str, str]],
    source: str,
    target: str,
    topics: str,
    credentials_file: Path,
    groups: str = "",
) -> str:
    """MM2 dedicated-mode properties for one flow, credentials by `${file:...}` reference.

    `clusters` maps alias -> {bootstrap, truststore, user}; the credentials file
    holds `<alias>.password` and `truststore.password` (FileConfigProvider).
    This is the stack's own wiring for tests; tenant flows are compiled by mm2gov.
    """
    ref = f"${{file:{credentials_file}:%s}}"
    entries: list[Entry] = [
        f"MirrorMaker 2 (dedicated mode) for flow {flow_id}; credentials are references, never values",
        ("clusters", f"{source},{target}"),
        ("config.providers", "file"),
        ("config.providers.file.class", "org.apache.kafka.common.config.provider.FileConfigProvider"),
    ]
    for alias in (source, target):
        info = clusters[alias]
        password = ref % f"{alias}.password"
        login = f'{SCRAM_MODULE} required username="{jaas_quoted(info["user"])}" password="{password}";'
        entries += [
            (f"{alias}.bootstrap.servers", info["bootstrap"]),
            (f"{alias}.security.protocol", "SASL_SSL"),
            (f"{alias}.sasl.mechanism", "SCRAM-SHA-512"),
            (f"{alias}.sasl.jaas.config", login),
            (f"{alias}.ssl.truststore.type", "PKCS12"),
            (f"{alias}.ssl.truststore.location", info["truststore"]),
            (f"{alias}.ssl.truststore.password", ref % "truststore.password"),
        ]
    entries += [
        (f"{source}->{target}.enabled", "true"),
        (f"{source}->{target}.topics", topics),
        (f"{source}->{target}.groups", groups or "^$"),
        (f"{target}->{source}.enabled", "false"),
        # as a generated flow (model/mm2_settings.py), and for both aliases: the 3.x MM2 builds a herder for the
        # disabled direction too. Without it that MM2 scans every class of its classpath once per herder, 30-40 s
        # each on a loaded 2-core machine, and a legacy MM2 missed its 120 s start in CI (stop 37)
        ("plugin.discovery", PLUGIN_DISCOVERY),
        *[(f"{alias}.plugin.discovery", PLUGIN_DISCOVERY) for alias in (source, target)],
        ("sync.topic.acls.enabled", "false"),
        ("sync.topic.configs.enabled", "true"),
        ("offset-syncs.topic.location", "target"),
        ("emit.checkpoints.enabled", "false"),
        ("refresh.topics.interval.seconds", "1"),
        ("refresh.groups.interval.seconds", "1"),
        *[(key, "1") for key in ("replication.factor", "checkpoints.topic.replication.factor",
                                 "heartbeats.topic.replication.factor", "offset-syncs.topic.replication.factor",
                                 "offset.storage.replication.factor", "status.storage.replication.factor",
                                 "config.storage.replication.factor")],
    ]
    return render(entries)  # the product's serializer (javaproperties), never pasted lines
