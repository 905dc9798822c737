"""The stack's OPA is the real server, answering through mm2gov's OPA client (governance/policy/opa_http.py)."""

from __future__ import annotations

import subprocess

from devstack import tools
from governance.policy.opa_http import OpaConnection
from tests.conftest import REPO_ROOT


def test_opa_answers_a_policy_query(stack):
    client = OpaConnection(stack.opa.url, timeout=10)
    try:
        assert client.request("GET", "/health").status == 200
        result = client.request("POST", "/v1/data/mm2gov/lib/names/separators", {"input": {"prefix": "pay"}}).json()
        assert set(result["result"]) == {".", "-", "_"}
        adhoc = client.request("POST", "/v1/query",
                               {"query": 'data.mm2gov.lib.names.ends_with_separator("payments.")'}).json()
        assert adhoc["result"] == [{}]
        refused = client.request("POST", "/v1/query",
                                 {"query": 'data.mm2gov.lib.names.ends_with_separator("pay")'}).json()
        assert refused.get("result", []) == []
    finally:
        client.close()


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
