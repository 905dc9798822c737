"""Where the real components of the local stack live on this machine, checked before anything starts.

The tools mm2gov itself runs (opa, Java, Spark's Kafka jars), the pinned versions and the cache
are found by `governance.tools` (re-exported here); this module adds what only the local stack
runs: the Kafka distributions (4.x, the last 3.x, the MM2s either side of the oldest one admission
accepts), kube-apiserver, etcd, the JMX exporter agent, Prometheus, promtool and Alertmanager (the
monitoring tests), kustomize (which builds the manifests under k8s/ for the tests) and the jars built
from this checkout's Java modules (the per-flow MM2 replication policy; the oracle's is found by
devstack/oracle.py). `make setup` (install/*.sh) puts them in the cache; every
lookup fails with one line that says what is missing and how to get it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from governance.tools import (
    MIN_JAVA,
    MissingTool,
    cache_dir,
    java,
    java_major_version,
    opa,
    setup_hint,
    spark_kafka_jars,
    versions,
)

__all__ = [
    "INSTALL_DIR",
    "MIN_JAVA",
    "KafkaDistribution",
    "MissingTool",
    "alertmanager",
    "amtool",
    "cache_dir",
    "etcd",
    "java",
    "java_major_version",
    "jmx_exporter_agent",
    "kafka",
    "kafka3",
    "kube_apiserver",
    "kustomize",
    "legacy_mm2",
    "mm2_boundary_versions",
    "opa",
    "prometheus",
    "promtool",
    "replication_policy_jar",
    "sources_key",
    "spark_kafka_jars",
    "strimzi_crds",
    "versions",
]

INSTALL_DIR = Path(__file__).parent / "install"
REPO_ROOT = Path(__file__).resolve().parents[1]
REPLICATION_POLICY_SOURCES = REPO_ROOT / "replication-policy"
REPLICATION_POLICY_JAR = "mm2gov-replication-policy.jar"


@dataclass(frozen=True)
class KafkaDistribution:
    version: str
    libs: Path

    @property
    def classpath(self) -> str:
        return str(self.libs / "*")


def kafka() -> KafkaDistribution:
    version = versions()["KAFKA_VERSION"]
    home = cache_dir() / f"kafka-{version}"
    if not (home / ".complete").is_file():
        raise MissingTool(f"Kafka {version} jars not found in {home}: {setup_hint('kafka.sh')}")
    return KafkaDistribution(version, home / "libs")


def kafka3() -> KafkaDistribution:
    """The older Kafka (KAFKA3_VERSION, the last 3.x release): the broker the broker-compatibility test runs as a
    source and the MirrorMaker 2 a flow is rolled from in the version-upgrade test (install/kafka3.sh)."""
    version = versions()["KAFKA3_VERSION"]
    home = cache_dir() / f"kafka-3.x-{version}-mm2"
    if not (home / ".complete").is_file():
        raise MissingTool(f"Kafka {version} (older broker, MM2) jars not found in {home}: {setup_hint('kafka3.sh')}")
    return KafkaDistribution(version, home / "libs")


def mm2_boundary_versions() -> tuple[str, str]:
    """The Kafka releases just below and at the oldest MirrorMaker 2 admission accepts (MIN_MM2_VERSION in
    governance/kafka/version.py): KAFKA_MM2_BELOW_MIN_VERSION and KAFKA_MM2_AT_MIN_VERSION (versions.env)."""
    pinned = versions()
    return pinned["KAFKA_MM2_BELOW_MIN_VERSION"], pinned["KAFKA_MM2_AT_MIN_VERSION"]


def legacy_mm2(version: str) -> KafkaDistribution:
    """The MirrorMaker 2 (connect-mirror and its runtime, no broker) of one of `mm2_boundary_versions()`, which the
    version-boundary test runs on a generated flow file (install/legacy-mm2.sh)."""
    pinned = mm2_boundary_versions()
    if version not in pinned:
        raise ValueError(f"Kafka {version}'s MM2 is not pinned: the stack fetches {' and '.join(pinned)} "
                         "(KAFKA_MM2_BELOW_MIN_VERSION, KAFKA_MM2_AT_MIN_VERSION in versions.env)")
    home = cache_dir() / f"kafka-mm2-{version}"
    if not (home / ".complete").is_file():
        raise MissingTool(f"Kafka {version} (MM2) jars not found in {home}: {setup_hint('legacy-mm2.sh')}")
    return KafkaDistribution(version, home / "libs")


def kube_apiserver() -> Path:
    version = versions()["K8S_VERSION"]
    path = cache_dir() / "bin" / f"kube-apiserver-{version}"
    if not os.access(path, os.X_OK):
        raise MissingTool(f"kube-apiserver {version} not found at {path}: {setup_hint('kube-apiserver.sh')}")
    return path


def kustomize() -> Path:
    """The kustomize executable the manifest tests build k8s/ with (pinned: KUSTOMIZE_VERSION)."""
    version = versions()["KUSTOMIZE_VERSION"]
    path = cache_dir() / "bin" / f"kustomize-{version}"
    if not os.access(path, os.X_OK):
        raise MissingTool(f"kustomize {version} not found at {path}: {setup_hint('kustomize.sh')}")
    return path


def _prometheus_binary(name: str, pin: str) -> Path:
    """A binary built by install/prometheus.sh: `<cache>/bin/<name>-<pinned version>`."""
    version = versions()[pin]
    path = cache_dir() / "bin" / f"{name}-{version}"
    if not os.access(path, os.X_OK):
        raise MissingTool(f"{name} {version} not found at {path}: {setup_hint('prometheus.sh')}")
    return path


def prometheus() -> Path:
    """The real Prometheus server the monitoring tests scrape MM2 and evaluate the generated rules with."""
    return _prometheus_binary("prometheus", "PROMETHEUS_VERSION")


def promtool() -> Path:
    """Prometheus' own checker: `check rules` and `test rules` on the generated alert rules."""
    return _prometheus_binary("promtool", "PROMETHEUS_VERSION")


def alertmanager() -> Path:
    """The real Alertmanager the routing tests deliver the generated rules' alerts through."""
    return _prometheus_binary("alertmanager", "ALERTMANAGER_VERSION")


def amtool() -> Path:
    """Alertmanager's own checker: `check-config` on the generated Alertmanager configuration."""
    return _prometheus_binary("amtool", "ALERTMANAGER_VERSION")


STRIMZI_CRDS_ENV = "MM2GOV_STRIMZI_CRDS"


def strimzi_crds() -> Path:
    """Strimzi's CRDs: $MM2GOV_STRIMZI_CRDS, else the pinned release's, generated into the cache at setup
    by Strimzi's own crd-generator from Maven Central (install/strimzi-crds.sh)."""
    override = os.environ.get(STRIMZI_CRDS_ENV)
    if override:
        path = Path(override)
        if not any(path.glob("*Crd*.yaml")):
            raise MissingTool(f"{STRIMZI_CRDS_ENV}={override} holds no *Crd*.yaml file: point it at Strimzi's "
                              "install/cluster-operator/ folder")
        return path
    version = versions()["STRIMZI_VERSION"]
    path = cache_dir() / f"strimzi-crds-{version}"
    if not (path / ".complete").is_file():
        raise MissingTool(f"Strimzi {version} CRDs not found at {path}: {setup_hint('strimzi-crds.sh')}, "
                          f"or set {STRIMZI_CRDS_ENV} to a folder of Strimzi's *Crd*.yaml files")
    return path


def etcd() -> Path:
    found = shutil.which("etcd")
    if not found:
        raise MissingTool(f"etcd not found on PATH: {setup_hint('etcd.sh')}")
    return Path(found)


def jmx_exporter_agent() -> Path:
    """The Prometheus JMX exporter java agent that `make setup` fetches beside Kafka."""
    pinned = versions()
    path = cache_dir() / f"kafka-{pinned['KAFKA_VERSION']}" / "agents" / (
        f"jmx_prometheus_javaagent-{pinned['JMX_EXPORTER_VERSION']}.jar")
    if not path.is_file():
        raise MissingTool(f"JMX exporter agent not found at {path}: {setup_hint('kafka.sh')}")
    return path


def sources_key(sources: Path, kafka_version: str) -> str:
    """The cache key of a Java module built by an install script (oracle.sh, replication-policy.sh).

    The scripts compute it as `find pom.xml src -type f | LC_ALL=C sort | xargs sha256sum`, then the line
    `kafka <version>`, through sha256sum, first 16 hex digits: a change to the sources or to the
    pinned Kafka gives another key, hence a rebuild.
    """
    files = sorted(
        path.relative_to(sources).as_posix()
        for path in [sources / "pom.xml", *(sources / "src").rglob("*")]
        if path.is_file()
    )
    listing = "".join(f"{hashlib.sha256((sources / name).read_bytes()).hexdigest()}  {name}\n" for name in files)
    return hashlib.sha256(f"{listing}kafka {kafka_version}\n".encode()).hexdigest()[:16]


def replication_policy_jar() -> Path:
    """The per-flow MM2 ReplicationPolicy (replication-policy/, io.mm2gov.replication) built from these sources
    for the pinned Kafka by install/replication-policy.sh; every devstack MM2 has it on its class path."""
    version = versions()["KAFKA_VERSION"]
    if not (REPLICATION_POLICY_SOURCES / "pom.xml").is_file():
        raise MissingTool(f"the replication policy's sources are not at {REPLICATION_POLICY_SOURCES}: "
                          "the local stack runs from a checkout of mm2gov")
    home = cache_dir() / f"replication-policy-{sources_key(REPLICATION_POLICY_SOURCES, version)}"
    if not (home / ".complete").is_file():
        raise MissingTool(f"the MM2 replication policy for these sources and Kafka {version} is not built in {home}: "
                          f"{setup_hint('replication-policy.sh')}")
    return home / REPLICATION_POLICY_JAR
