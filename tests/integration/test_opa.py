"""The stack's OPA is the real server, answering through mm2gov's OPA client (governance/policy/opa_http.py)."""

from __future__ import annotations

import json
import re
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
    """Every `test_` rule of the library's *_test.rego files ran and passed. One result per test in JSON, not
    `-v`: verbose mode traces every evaluation (36 CPU-s against 5 here, 2026-11-28)."""
    done = subprocess.run([str(tools.opa()), "test", "--timeout=120s", "--format=json", "policies/"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr
    results = json.loads(done.stdout)
    failed = [f"{r['package']}.{r['name']}" for r in results if {"fail", "error", "skip"} & set(r)]
    assert failed == []
    written = {(path.as_posix(), match) for path in (REPO_ROOT / "policies").rglob("*_test.rego")
               for match in re.findall(r"^(test_\w+)", path.read_text(), re.MULTILINE)}
    ran = {((REPO_ROOT / r["location"]["file"]).as_posix(), r["name"]) for r in results}
    assert ran == written and len(results) == len(written)


def test_policy_library_is_strict_and_formatted():
    opa = str(tools.opa())
    check = subprocess.run([opa, "check", "--strict", "policies/"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    fmt = subprocess.run([opa, "fmt", "--list", "policies/"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert fmt.stdout.strip() == "", f"not `opa fmt` formatted: {fmt.stdout}"
