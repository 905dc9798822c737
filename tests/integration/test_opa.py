"""The stack's OPA is the real server, answering through opa-python-client."""

from __future__ import annotations

import subprocess

from opa_client import OpaClient

from devstack import tools
from tests.conftest import REPO_ROOT


def test_opa_answers_a_policy_query(stack):
    client = OpaClient(host="127.0.0.1", port=stack.opa.port)
    try:
        assert client.check_connection()
        result = client.query_rule(
            {"prefix": "pay"}, "mm2gov/lib/names", "separators"
        )
        assert set(result["result"]) == {".", "-", "_"}
        adhoc = client.ad_hoc_query('data.mm2gov.lib.names.ends_with_separator("payments.")')
        assert adhoc["result"] == [{}]
        refused = client.ad_hoc_query('data.mm2gov.lib.names.ends_with_separator("pay")')
        assert refused.get("result", []) == []
    finally:
        client.close_connection()


def test_opa_test_runs_the_policy_library():
    done = subprocess.run([str(tools.opa()), "test", "--timeout=120s", "-v", "policies/"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout and "FAIL" not in done.stdout


def test_policy_library_is_strict_and_formatted():
    opa = str(tools.opa())
    check = subprocess.run([opa, "check", "--strict", "policies/"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    fmt = subprocess.run([opa, "fmt", "--list", "policies/"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert fmt.stdout.strip() == "", f"not `opa fmt` formatted: {fmt.stdout}"
