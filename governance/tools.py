"""The external tools mm2gov runs, found (never assumed) before anything starts; the pinned versions.

Every finder looks, in order, at an explicit override in the environment, at PATH (for
executables), then at the cache that `make setup` fills ($MM2GOV_CACHE, else ~/.cache/mm2gov).
A tool that is not there is a MissingTool (exit 3) whose message is one line naming the remedy.

| tool | override | then |
|---|---|---|
| opa (validate, plan, generate, apply, admission without --opa-url) | `MM2GOV_OPA` | `opa` on PATH, then the cache |
| Java 17+ (Spark, for `mm2gov audit`) | `JAVA_HOME` | `java` on PATH |
| Spark's Kafka source jars (`mm2gov audit`) | `MM2GOV_SPARK_KAFKA_JARS` | the cache, for the installed pyspark |

The pinned versions live in `governance/versions.env`, the one file the install scripts of a checkout
(devstack/install/) source too. It is package data of `governance` because the product reads it at run
time (the opa it looks for, the Kafka version its Strimzi resources name); the local test stack
(`devstack`, which builds on this module) is not part of the installed package.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from governance.errors import RuntimeFailure

MIN_JAVA = 17
OPA_ENV = "MM2GOV_OPA"
SPARK_KAFKA_JARS_ENV = "MM2GOV_SPARK_KAFKA_JARS"
CACHE_ENV = "MM2GOV_CACHE"
INSTALL_SCRIPTS = "devstack/install"  # in a checkout, where `make setup` gets each component (for the remedies)

# OPA's heap is small next to what a decision allocates, so at Go's default (GOGC=100) it
# collects every few dozen decisions: GOGC=400 served 25-45% more admission decisions per
# second on 2 cores (bench/admission.py) for a few tens of MB more heap. $GOGC still wins.
OPA_GOGC = "400"


class MissingTool(RuntimeFailure):
    """A tool mm2gov needs is not installed, not where its override says, or too old."""


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "mm2gov")


def versions() -> dict[str, str]:
    """The pinned component versions, from governance/versions.env (package data)."""
    text = files("governance").joinpath("versions.env").read_text()
    pairs = {}
    for line in text.splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, value = line.split("=", 1)
            pairs[key.strip()] = value.strip()
    return pairs


def setup_hint(script: str) -> str:
    return f"run `make setup` (or {INSTALL_SCRIPTS}/{script})"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


# -- opa -------------------------------------------------------------------------------------


def opa() -> Path:
    """The `opa` executable: $MM2GOV_OPA, else `opa` on PATH, else the pinned build in the cache."""
    override = os.environ.get(OPA_ENV)
    if override:
        if not _executable(Path(override)):
            raise MissingTool(f"{OPA_ENV}={override} is not an executable file: point it at an `opa` binary")
        return Path(override)
    found = shutil.which("opa")
    if found:
        return Path(found)
    version = versions()["OPA_VERSION"]
    cached = cache_dir() / "bin" / f"opa-{version}"
    if _executable(cached):
        return cached
    raise MissingTool(f"opa not found ({OPA_ENV} unset, no `opa` on PATH, not at {cached}): set {OPA_ENV}, "
                      f"put opa {version} on PATH, or {setup_hint('opa.sh')}")


def opa_version(path: Path) -> str | None:
    """'1.22.2' from `opa version`, None when it cannot be told."""
    out = _output([str(path), "version"])
    match = re.search(r"^Version:\s*(\S+)", out or "", re.MULTILINE)
    return match.group(1) if match else None


def opa_env() -> dict[str, str]:
    """The whole environment of an OPA process: the GC setting above ($GOGC wins), nothing else.

    OPA needs no variable. Policies can read every one through `opa.runtime().env`, so none of
    mm2gov's (CI tokens, cloud credentials) is passed on, should an organisation rule ever get
    past the sandbox check (governance/policy/bundle.py).
    """
    return {"GOGC": os.environ.get("GOGC", OPA_GOGC)}


def opa_command(opa: Path, *args: str) -> list[str]:
    """`opa ARGS` run with exactly opa_env() as its environment.

    Through `env -i`, which clears the environment and execs OPA (same pid, so a managed
    process starts, waits for and stops OPA itself).
    """
    env = shutil.which("env") or "/usr/bin/env"
    return [env, "-i", *(f"{name}={value}" for name, value in sorted(opa_env().items())), str(opa), *args]


# -- java ------------------------------------------------------------------------------------


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
            "install a JDK/JRE 17, e.g. `apt-get install openjdk-17-jre-headless`, or set JAVA_HOME"
        )
    major = java_major(candidate)
    if major < MIN_JAVA:
        raise MissingTool(
            f"Java {MIN_JAVA}+ required for Kafka 4, found Java {major} at {candidate}: "
            "set JAVA_HOME to a newer JDK"
        )
    return candidate


def java_major(candidate: Path) -> int:
    try:
        out = subprocess.run(
            [str(candidate), "-version"], capture_output=True, text=True, timeout=30
        ).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MissingTool(f"cannot run {candidate}: {exc}") from None
    major = java_major_version(out)
    if major is None:
        raise MissingTool(f"cannot tell the Java version of {candidate} from `java -version`")
    return major


def java_major_version(version_output: str) -> int | None:
    """17 from 'openjdk version "17.0.15"', 8 from 'java version "1.8.0_392"'."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


# -- spark -----------------------------------------------------------------------------------


def pyspark_version() -> str:
    """The installed pyspark's version (the `audit` extra)."""
    try:
        return importlib.metadata.version("pyspark")
    except importlib.metadata.PackageNotFoundError:
        raise MissingTool("pyspark not installed (needed by `mm2gov audit`): pip install 'mm2gov[audit]'") from None


def spark_kafka_jars() -> list[Path]:
    """Spark's Kafka source (spark-sql-kafka-0-10 and what Spark lacks of it) for the installed pyspark.

    $MM2GOV_SPARK_KAFKA_JARS: a directory of jars, or jar files separated by commas (as in spark.jars);
    else the cache's copy for the installed pyspark's version.
    """
    override = os.environ.get(SPARK_KAFKA_JARS_ENV)
    if override:
        return _jars_from(override)
    version = pyspark_version()
    home = cache_dir() / f"spark-kafka-{version}"
    listing = home / ".jars"
    if not (home / ".complete").is_file() or not listing.is_file():
        raise MissingTool(f"spark-sql-kafka {version} not found in {home}: set {SPARK_KAFKA_JARS_ENV} "
                          f"or {setup_hint('spark-kafka.sh')}")
    jars = [Path(line) for line in listing.read_text().split()]
    missing = [str(j) for j in jars if not j.is_file()]
    if missing:
        raise MissingTool(f"spark-sql-kafka {version}: {missing[0]} is gone: {setup_hint('spark-kafka.sh')} "
                          f"after removing {home}")
    return jars


def _jars_from(override: str) -> list[Path]:
    where = Path(override)
    if where.is_dir():
        jars = sorted(where.glob("*.jar"))
        if not any(j.name.startswith("spark-sql-kafka-") for j in jars):
            raise MissingTool(f"{SPARK_KAFKA_JARS_ENV}={override} holds no spark-sql-kafka-*.jar: point it at "
                              "the directory of Spark's Kafka source jars")
        return jars
    jars = [Path(p.strip()) for p in override.split(",") if p.strip()]
    missing = [str(j) for j in jars if not j.is_file()]
    if missing or not jars:
        raise MissingTool(f"{SPARK_KAFKA_JARS_ENV}: {missing[0] if missing else 'empty'} is not a jar file: "
                          "give a directory of jars or comma-separated jar files")
    return jars


def jar_version(jar: Path) -> str | None:
    """'4.0.0' from spark-sql-kafka-0-10_2.13-4.0.0.jar (the part after the last `-` that starts with a digit)."""
    match = re.search(r"-(\d[\w.]*)\.jar$", jar.name)
    return match.group(1) if match else None


# -- doctor ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolStatus:
    """One external tool as `mm2gov doctor` reports it."""

    name: str
    used_by: str
    found: bool
    location: str | None = None  # where it was found
    source: str | None = None  # how: an override variable, PATH, the cache, the Python environment
    version: str | None = None
    details: list[str] = field(default_factory=list)
    remedy: str | None = None  # the one line to fix it when missing


def check_tools() -> list[ToolStatus]:
    """Every external tool mm2gov uses at run time, each found or with its remedy."""
    return [_check_opa(), _check_java(), _check_kafka_client(), _check_pyspark(), _check_spark_kafka()]


def _source_of(path: Path, override: str, cache_hint: Path | None = None) -> str:
    if os.environ.get(override):
        return f"${override}"
    if cache_hint is not None and cache_hint in path.parents:
        return "cache"
    return "PATH"


def _check_opa() -> ToolStatus:
    used_by = "validate, plan, generate, apply, drift, secrets, admission (unless --opa-url)"
    try:
        path = opa()
    except MissingTool as exc:
        return ToolStatus("opa", used_by, False, remedy=str(exc))
    version = opa_version(path)
    if version is None:
        return ToolStatus("opa", used_by, False, str(path), remedy=f"`{path} version` failed: replace this opa")
    return ToolStatus("opa", used_by, True, str(path), _source_of(path, OPA_ENV, cache_dir()), version,
                      [f"pinned {versions()['OPA_VERSION']}"])


def _check_java() -> ToolStatus:
    used_by = "audit (Spark)"
    try:
        path = java()
    except MissingTool as exc:
        return ToolStatus("java", used_by, False, remedy=str(exc))
    home = os.environ.get("JAVA_HOME")
    source = "$JAVA_HOME" if home and Path(home) / "bin" / "java" == path else "PATH"
    return ToolStatus("java", used_by, True, str(path), source, str(java_major(path)))


def _check_kafka_client() -> ToolStatus:
    used_by = "apply, drift, secrets, audit (cluster metadata)"
    import confluent_kafka

    return ToolStatus("confluent-kafka", used_by, True, str(Path(confluent_kafka.__file__).parent),
                      "Python environment", importlib.metadata.version("confluent-kafka"),
                      [f"librdkafka {confluent_kafka.libversion()[0]}"])


def _check_pyspark() -> ToolStatus:
    used_by = "audit"
    try:
        version = pyspark_version()
    except MissingTool as exc:
        return ToolStatus("pyspark", used_by, False, remedy=str(exc))
    dist = importlib.metadata.distribution("pyspark")
    return ToolStatus("pyspark", used_by, True, str(dist.locate_file("pyspark")), "Python environment", version)


def _check_spark_kafka() -> ToolStatus:
    used_by = "audit (record scan, local Spark)"
    try:
        jars = spark_kafka_jars()
    except MissingTool as exc:
        return ToolStatus("spark-sql-kafka", used_by, False, remedy=str(exc))
    main = next((j for j in jars if j.name.startswith("spark-sql-kafka-")), jars[0])
    return ToolStatus("spark-sql-kafka", used_by, True, str(main.parent),
                      f"${SPARK_KAFKA_JARS_ENV}" if os.environ.get(SPARK_KAFKA_JARS_ENV) else "cache",
                      jar_version(main), [j.name for j in jars])


def _output(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None
