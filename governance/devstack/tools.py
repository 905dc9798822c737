"""Where the real components live on this machine, checked before anything starts.

`make setup` (install/*.sh) puts them in the cache; every lookup here fails
with one line that says what is missing and how to get it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from governance.errors import RuntimeFailure

INSTALL_DIR = Path(__file__).parent / "install"
MIN_JAVA = 17


def cache_dir() -> Path:
    return Path(os.environ.get("MM2GOV_CACHE", Path.home() / ".cache" / "mm2gov"))


def versions() -> dict[str, str]:
    """The pinned component versions, from install/versions.env."""
    pairs = {}
    for line in (INSTALL_DIR / "versions.env").read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, value = line.split("=", 1)
            pairs[key.strip()] = value.strip()
    return pairs


class MissingTool(RuntimeFailure):
    """A component the stack needs is not installed or too old."""


def _setup_hint(what: str) -> str:
    return f"run `make setup` (or {INSTALL_DIR / what})"


def java() -> Path:
    """The `java` executable ($JAVA_HOME first, then PATH), version 17 or newer."""
    home = os.environ.get("JAVA_HOME")
    candidate = Path(home) / "bin" / "java" if home else None
    if not (candidate and candidate.is_file()):
        found = shutil.which("java")
        candidate = Path(found) if found else None
    if candidate is None:
        raise MissingTool(
            f"Java {MIN_JAVA}+ not found (no JAVA_HOME, no `java` on PATH): "
            "install a JDK/JRE 17, e.g. `apt-get install openjdk-17-jre-headless`"
        )
    try:
        out = subprocess.run(
            [str(candidate), "-version"], capture_output=True, text=True, timeout=30
        ).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MissingTool(f"cannot run {candidate}: {exc}") from None
    major = java_major_version(out)
    if major is None:
        raise MissingTool(f"cannot tell the Java version of {candidate} from `java -version`")
    if major < MIN_JAVA:
        raise MissingTool(
            f"Java {MIN_JAVA}+ required for Kafka 4, found Java {major} at {candidate}: "
            "set JAVA_HOME to a newer JDK"
        )
    return candidate


def java_major_version(version_output: str) -> int | None:
    """17 from 'openjdk version "17.0.15"', 8 from 'java version "1.8.0_392"'."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


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
        raise MissingTool(f"Kafka {version} jars not found in {home}: {_setup_hint('kafka.sh')}")
    return KafkaDistribution(version, home / "libs")


def _cached_binary(name: str, version_key: str, script: str) -> Path:
    version = versions()[version_key]
    path = cache_dir() / "bin" / f"{name}-{version}"
    if not os.access(path, os.X_OK):
        raise MissingTool(f"{name} {version} not found at {path}: {_setup_hint(script)}")
    return path


def opa() -> Path:
    return _cached_binary("opa", "OPA_VERSION", "opa.sh")


def kube_apiserver() -> Path:
    return _cached_binary("kube-apiserver", "K8S_VERSION", "kube-apiserver.sh")


def etcd() -> Path:
    found = shutil.which("etcd")
    if not found:
        raise MissingTool(f"etcd not found on PATH: {_setup_hint('etcd.sh')}")
    return Path(found)


def jmx_exporter_agent() -> Path:
    """The Prometheus JMX exporter java agent that `make setup` fetches beside Kafka."""
    pinned = versions()
    path = cache_dir() / f"kafka-{pinned['KAFKA_VERSION']}" / "agents" / (
        f"jmx_prometheus_javaagent-{pinned['JMX_EXPORTER_VERSION']}.jar")
    if not path.is_file():
        raise MissingTool(f"JMX exporter agent not found at {path}: {_setup_hint('kafka.sh')}")
    return path


def spark_kafka_jars() -> list[Path]:
    """Spark's Kafka source for the installed pyspark (spark-sql-kafka-0-10 and what Spark lacks of it)."""
    import pyspark

    home = cache_dir() / f"spark-kafka-{pyspark.__version__}"
    listing = home / ".jars"
    if not (home / ".complete").is_file() or not listing.is_file():
        raise MissingTool(f"spark-sql-kafka {pyspark.__version__} not found in {home}: {_setup_hint('spark-kafka.sh')}")
    return [Path(line) for line in listing.read_text().split()]
