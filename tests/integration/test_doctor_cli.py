"""`mm2gov doctor` on this machine, after `make setup`: every tool mm2gov runs is found."""

from __future__ import annotations

import json

from tests.conftest import run_cli


def test_doctor_finds_everything_after_setup():
    done = run_cli("doctor", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    tools = {t["name"]: t for t in report["tools"]}
    assert report["ok"] is True
    assert set(tools) == {"opa", "java", "confluent-kafka", "pyspark", "spark-sql-kafka"}
    for tool in tools.values():
        assert tool["found"] and tool["location"] and tool["version"] and tool["remedy"] is None, tool
    assert int(tools["java"]["version"]) >= 17
    assert any(j.startswith("spark-sql-kafka-0-10_") for j in tools["spark-sql-kafka"]["details"])
