"""`mm2gov validate` as CI runs it: formats, exit codes, organisation rules, a dead OPA."""

from __future__ import annotations

import json
import shutil
import socket
import urllib.request
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from governance.config import load_inventory
from governance.policy.bundle import builtin_modules, org_modules
from tests.conftest import REPO_ROOT, run_cli

ACME = REPO_ROOT / "examples" / "acme"
BAD_GRANT = REPO_ROOT / "examples" / "bad" / "grant_write"


def test_acme_is_valid_exit_0():
    done = run_cli("validate", str(ACME))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "no violations\n"


def test_violation_exit_1_with_file_and_line():
    done = run_cli("validate", str(BAD_GRANT))
    assert done.returncode == 1
    assert done.stdout.startswith("tenants/payments.yaml:15: high grant_write [payments] ")


def test_fail_on_critical_lets_high_pass():
    assert run_cli("validate", str(BAD_GRANT), "--fail-on", "critical").returncode == 0


def test_json_is_one_document_with_scopes():
    done = run_cli("validate", str(ACME), "--format", "json")
    document = json.loads(done.stdout)
    assert document["valid"] is True and document["violations"] == []
    payments = document["scopes"]["payments"]
    assert payments["flows"][0]["remote_topic_prefixes"] == ["onprem.payments."]
    assert {"name": "User:payments-analytics", "access": ["read"], "topic_operations": ["DESCRIBE", "READ"],
            "group_operations": ["READ"], "quota": None} in payments["principals"]


def test_sarif_points_at_file_and_line():
    done = run_cli("validate", "examples/bad/grant_write", "--format", "sarif")
    sarif = json.loads(done.stdout)
    assert sarif["version"] == "2.1.0"
    [result] = sarif["runs"][0]["results"]
    assert result["ruleId"] == "grant_write" and result["level"] == "error"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "examples/bad/grant_write/tenants/payments.yaml"
    assert location["region"]["startLine"] == 15
    assert [r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]] == ["grant_write"]


def test_junit_has_a_failing_case_for_the_tenant():
    done = run_cli("validate", str(BAD_GRANT), "--format", "junit")
    suite = ET.fromstring(done.stdout).find("testsuite")
    assert suite is not None and suite.get("failures") == "1" and suite.get("tests") == "3"
    failing = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failing == ["tenant payments"]


def test_markdown_table():
    done = run_cli("validate", str(BAD_GRANT), "--format", "markdown")
    assert "| severity | rule | tenant | location | message |" in done.stdout
    assert "| high | `grant_write` | payments | `tenants/payments.yaml:15` |" in done.stdout


@pytest.fixture
def acme_copy(tmp_path: Path) -> Path:
    target = tmp_path / "acme"
    shutil.copytree(ACME, target)
    return target


def test_organisation_rule_adds_violations(acme_copy):
    path = acme_copy / "tenants" / "hr.yaml"
    path.write_text(path.read_text().replace("hr-systems@acme.example", "hr@gmail.example"))
    done = run_cli("validate", str(acme_copy), "--format", "json", "--fail-on", "medium")
    assert done.returncode == 1
    [violation] = json.loads(done.stdout)["violations"]
    assert violation["rule"] == "acme_owner_domain" and violation["tenant"] == "hr"
    assert violation["location"] == "tenants/hr.yaml:3"


def test_organisation_rego_syntax_error_is_exit_2_with_opa_message_and_file(acme_copy):
    broken = acme_copy / "policies" / "broken.rego"
    broken.write_text("package mm2gov.rules.broken\n\nviolations contains v if {\n  v := \n}\n")
    done = run_cli("validate", str(acme_copy))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "policy does not compile (OPA)" in done.stderr
    assert "  policies/broken.rego:5: rego_parse_error" in done.stderr  # named as in the repo, with its line


def test_unreachable_opa_is_exit_3_and_denies():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = run_cli("validate", str(ACME), "--opa-url", f"http://127.0.0.1:{port}")
    assert done.returncode == 3
    assert done.stdout == ""
    expected = f"error: OPA unreachable at http://127.0.0.1:{port}: cannot evaluate policies, denying"
    assert done.stderr.strip() == expected


def test_opa_that_cannot_start_is_exit_3(tmp_path):
    done = run_cli("validate", str(ACME), env={"MM2GOV_CACHE": str(tmp_path)})
    assert done.returncode == 3
    assert done.stderr.startswith("error: OPA cannot start: opa ") and "make setup" in done.stderr


def opa_policy_ids(url: str) -> set[str]:
    with urllib.request.urlopen(f"{url}/v1/policies", timeout=10) as response:
        return {policy["id"] for policy in json.load(response)["result"]}


def test_external_opa_url_is_used_and_keeps_no_organisation_rule(warm_opa):
    """The library is uploaded to the external OPA and stays (the next run finds it); acme's organisation rule
    is uploaded for the run and removed at its end: another repo judged by that OPA later never sees it."""
    org = {m.id for m in org_modules(load_inventory(ACME).org_policies, ACME)}
    assert org, "acme has an organisation rule"
    done = run_cli("validate", str(ACME), "--opa-url", warm_opa)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "no violations\n"
    held = opa_policy_ids(warm_opa)
    assert {m.id for m in builtin_modules()} <= held
    assert not org & held, org & held


def test_the_opa_url_can_come_from_the_environment_and_the_flag_wins(warm_opa):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dead = f"http://127.0.0.1:{port}"
    done = run_cli("validate", str(ACME), env={"MM2GOV_OPA_URL": dead})
    assert done.returncode == 3
    assert done.stderr.strip() == f"error: OPA unreachable at {dead}: cannot evaluate policies, denying"
    done = run_cli("validate", str(ACME), "--opa-url", warm_opa, env={"MM2GOV_OPA_URL": dead})
    assert done.returncode == 0, done.stderr
