"""The per-flow ReplicationPolicy's build and lookup: install/replication-policy.sh and devstack/tools.py agree on
where a build of these sources lives, a missing build tool is one line, and MM2 gets the jar before Kafka's libs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from devstack import oracle, tools
from devstack.mirrormaker import mm2_classpath

SCRIPT = tools.INSTALL_DIR / "replication-policy.sh"
KAFKA_VERSION = tools.versions()["KAFKA_VERSION"]
# what the scripts run before they look for java, javac and mvn
SCRIPT_TOOLS = ("bash", "dirname", "find", "sort", "xargs", "sha256sum", "cut")


def run_script(script: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize(("script", "sources", "prefix"), [
    ("replication-policy.sh", tools.REPLICATION_POLICY_SOURCES, "replication-policy"),
    ("oracle.sh", oracle.ORACLE_SOURCES, "oracle"),
])
def test_install_script_finds_the_build_the_python_key_names(tmp_path, script, sources, prefix):
    """Only the directory named by tools.sources_key is marked built: the script must call it cached, not rebuild."""
    built = tmp_path / f"{prefix}-{tools.sources_key(sources, KAFKA_VERSION)}"
    built.mkdir()
    (built / ".complete").touch()
    done = run_script(tools.INSTALL_DIR / script, {**os.environ, "MM2GOV_CACHE": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(f"cached at {built}")


def test_oracle_key_is_the_shared_function():
    assert oracle.sources_key(KAFKA_VERSION) == tools.sources_key(oracle.ORACLE_SOURCES, KAFKA_VERSION)


def test_sources_key_follows_sources_and_kafka_version_only(tmp_path):
    module = tmp_path / "module"
    shutil.copytree(tools.REPLICATION_POLICY_SOURCES / "src", module / "src")
    shutil.copy(tools.REPLICATION_POLICY_SOURCES / "pom.xml", module / "pom.xml")
    key = tools.sources_key(module, KAFKA_VERSION)
    assert key == tools.sources_key(tools.REPLICATION_POLICY_SOURCES, KAFKA_VERSION)  # content, not location
    assert len(key) == 16 and int(key, 16) >= 0
    (module / "target").mkdir()
    (module / "target" / "mm2gov-replication-policy.jar").write_bytes(b"build output")
    assert tools.sources_key(module, KAFKA_VERSION) == key
    assert tools.sources_key(module, "4.0.0") != key
    source = next((module / "src" / "main").rglob("FlowTopics.java"))
    source.write_text(source.read_text() + "\n")
    assert tools.sources_key(module, KAFKA_VERSION) != key


def restricted_path(tmp_path: Path, *present: str) -> str:
    """A PATH holding the tools the script needs before its checks, and of java/javac/mvn only `present`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in (*SCRIPT_TOOLS, *present):
        found = shutil.which(name)
        assert found, f"{name} is needed on this machine for the test"
        (bin_dir / name).symlink_to(found)
    return str(bin_dir)


@pytest.mark.parametrize(("present", "message"), [
    ((), "error: Java 17+ is required to build the replication policy"),
    (("java",), "error: a JDK (javac) is required to build the replication policy"),
    (("java", "javac"), "error: Maven is required to build the replication policy"),
])
def test_missing_build_tool_is_one_line(tmp_path, present, message):
    env = {"PATH": restricted_path(tmp_path, *present), "MM2GOV_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    done = run_script(SCRIPT, env)
    assert done.returncode == 1
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_locator_without_a_build_names_the_remedy(tmp_path, monkeypatch):
    monkeypatch.setenv("MM2GOV_CACHE", str(tmp_path))
    with pytest.raises(tools.MissingTool) as missing:
        tools.replication_policy_jar()
    message = str(missing.value)
    assert "\n" not in message
    assert "make setup" in message and "replication-policy.sh" in message
    assert f"replication-policy-{tools.sources_key(tools.REPLICATION_POLICY_SOURCES, KAFKA_VERSION)}" in message


def test_mm2_class_path_is_the_policy_jar_then_kafkas_libs(tmp_path, monkeypatch):
    monkeypatch.setenv("MM2GOV_CACHE", str(tmp_path))
    kafka = tmp_path / f"kafka-{KAFKA_VERSION}"
    (kafka / "libs").mkdir(parents=True)
    (kafka / ".complete").touch()
    with pytest.raises(tools.MissingTool, match="replication policy"):
        mm2_classpath()  # Kafka alone is not enough: every flow's file names the policy class
    built = tmp_path / f"replication-policy-{tools.sources_key(tools.REPLICATION_POLICY_SOURCES, KAFKA_VERSION)}"
    built.mkdir()
    (built / ".complete").touch()
    jar = tools.replication_policy_jar()
    assert jar == built / "mm2gov-replication-policy.jar"
    assert mm2_classpath().split(":") == [str(jar), str(kafka / "libs" / "*")]
