"""`mm2gov doctor` and the tool finders behind it, in a fake PATH and environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from governance import tools
from governance.cli import cli
from governance.errors import EXIT_RUNTIME

PINNED_OPA = tools.cache_dir() / "bin" / f"opa-{tools.versions()['OPA_VERSION']}"  # the real one, from `make setup`


@pytest.fixture
def bare(monkeypatch, tmp_path):
    """An environment where no tool is anywhere: empty PATH, empty cache, no override."""
    for name in (tools.OPA_ENV, tools.SPARK_KAFKA_JARS_ENV, "JAVA_HOME"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("MM2GOV_CACHE", str(tmp_path / "cache"))
    return tmp_path


def doctor(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["doctor", *args])
    return result.exit_code, result.output


def test_missing_opa_is_one_line_with_the_remedy_and_exit_3(bare):
    with pytest.raises(tools.MissingTool) as missing:
        tools.opa()
    message = str(missing.value)
    assert "\n" not in message and missing.value.exit_code == EXIT_RUNTIME
    assert "MM2GOV_OPA" in message and "make setup" in message
    code, out = doctor()
    assert code == EXIT_RUNTIME
    assert f"MISSING  opa              {message}" in out.splitlines()
    code, out = doctor("--format", "json")
    report = json.loads(out)
    assert code == EXIT_RUNTIME and report["ok"] is False
    opa = next(t for t in report["tools"] if t["name"] == "opa")
    assert opa["found"] is False and opa["remedy"] == message


def test_opa_found_through_the_override_with_its_version(bare, monkeypatch):
    if not os.access(PINNED_OPA, os.X_OK):
        pytest.fail(f"{PINNED_OPA} not found: run `make setup`")
    monkeypatch.setenv(tools.OPA_ENV, str(PINNED_OPA))
    assert tools.opa() == PINNED_OPA
    _, out = doctor("--format", "json")
    opa = next(t for t in json.loads(out)["tools"] if t["name"] == "opa")
    assert opa == {**opa, "found": True, "location": str(PINNED_OPA), "source": "$MM2GOV_OPA",
                   "version": tools.versions()["OPA_VERSION"].removeprefix("v"), "remedy": None}


def test_override_that_is_not_executable_names_the_variable(bare, monkeypatch):
    monkeypatch.setenv(tools.OPA_ENV, str(bare / "nothing-here"))
    with pytest.raises(tools.MissingTool, match=r"^MM2GOV_OPA=.*nothing-here is not an executable file"):
        tools.opa()


def test_opa_on_path_comes_before_the_cache(bare):
    fake = bare / "bin" / "opa"
    fake.write_text("#!/bin/sh\necho 'Version: 0.0.0-test'\n")
    fake.chmod(0o755)
    assert tools.opa() == fake
    assert tools.opa_version(fake) == "0.0.0-test"


def test_spark_kafka_jars_from_the_override(bare, monkeypatch):
    jars = bare / "jars"
    jars.mkdir()
    for name in ("spark-sql-kafka-0-10_2.13-4.0.0.jar", "kafka-clients-3.9.0.jar"):
        (jars / name).write_bytes(b"")
    monkeypatch.setenv(tools.SPARK_KAFKA_JARS_ENV, str(jars))
    assert [j.name for j in tools.spark_kafka_jars()] == ["kafka-clients-3.9.0.jar",
                                                          "spark-sql-kafka-0-10_2.13-4.0.0.jar"]
    monkeypatch.setenv(tools.SPARK_KAFKA_JARS_ENV, f"{jars / 'kafka-clients-3.9.0.jar'},{jars / 'gone.jar'}")
    with pytest.raises(tools.MissingTool, match=r"gone\.jar is not a jar file"):
        tools.spark_kafka_jars()
    assert tools.jar_version(Path("spark-sql-kafka-0-10_2.13-4.0.0.jar")) == "4.0.0"


def test_missing_spark_kafka_jars_name_the_override_and_setup(bare):
    with pytest.raises(tools.MissingTool) as missing:
        tools.spark_kafka_jars()
    assert "\n" not in str(missing.value)
    assert "MM2GOV_SPARK_KAFKA_JARS" in str(missing.value) and "make setup" in str(missing.value)


def test_production_code_does_not_load_the_local_stack():
    """import-linter checks the imports it can see; this checks what a run of the CLI loads."""
    probe = ("import sys, governance.cli, governance.policy.opa, governance.compile.desired, spark_audit.job; "
             "print(sorted(m for m in sys.modules if m.startswith('devstack')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"
