"""The Rego tests of the admission rules on what mm2gov really generates and sends (tests/rego/acme_test.rego),
run on data generated now: tests/tools/gen_acme_admission_data.py writes the repo document and the admission
inputs of examples/acme into a temporary file, and the real OPA runs `opa test policies/ tests/rego/ <data>`.

Nothing generated is committed, so the data cannot be stale. (Under integration because the generator asks a
real OPA for the repo decision, as `mm2gov generate` does; it needs no running stack.)
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from governance import tools
from tests.conftest import REPO_ROOT
from tests.tools import gen_acme_admission_data as gen

PACKAGE = "data.mm2gov.admission.acme_test"
REGO_TESTS = gen.REGO_TESTS.relative_to(REPO_ROOT).as_posix()


@pytest.fixture(scope="module")
def acme_data() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """examples/acme's repo document and admission inputs (decided by a managed OPA, once for the module)."""
    return gen.data()


def declared_tests() -> set[str]:
    """The test rules acme_test.rego declares, read from the file so that a new one is expected to run too."""
    return set(re.findall(r"^(test_\w+)\s+if\b", (gen.REGO_TESTS / "acme_test.rego").read_text(), re.MULTILINE))


def opa_test(data: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    """`opa test policies/ tests/rego/ DATA`, the acme package's tests only (test_opa.py runs the library's own;
    every module is still compiled together): the exit code and each test's result by name."""
    done = subprocess.run([str(tools.opa()), "test", "--timeout=120s", "--format=json",
                           "--run", f"^{re.escape(PACKAGE)}\\.", "policies/", REGO_TESTS, str(data)],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.stdout.lstrip().startswith("["), done.stdout[-4000:] + done.stderr[-4000:]  # ran, compiled
    results = json.loads(done.stdout)
    assert {r["package"] for r in results} <= {PACKAGE}
    return done.returncode, {r["name"]: r for r in results}


def test_acme_rego_tests_pass_on_freshly_generated_data(acme_data, tmp_path: Path):
    data = tmp_path / "acme_data_test.rego"
    data.write_text(gen.module(*acme_data))
    code, ran = opa_test(data)
    failed = {name: r for name, r in ran.items() if r.get("fail") or r.get("error") or r.get("skip")}
    assert code == 0 and not failed, failed
    assert set(ran) == declared_tests() and len(ran) >= 4, sorted(ran)  # every acme test ran
    # the tests and the data they run on are strict and `opa fmt` formatted, as test_opa.py asks of policies/
    opa = str(tools.opa())
    check = subprocess.run([opa, "check", "--strict", "policies/", REGO_TESTS, str(data)], cwd=REPO_ROOT,
                           capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr
    fmt = subprocess.run([opa, "fmt", "--list", REGO_TESTS, str(data)], cwd=REPO_ROOT, capture_output=True,
                         text=True, check=False)
    assert fmt.stdout.strip() == "", f"not `opa fmt` formatted: {fmt.stdout}"


def test_the_acme_tests_fail_on_data_that_breaks_them(acme_data, tmp_path: Path):
    """The run above can fail: one generated KafkaUser handed to another tenant is refused, and the test that
    every generated object is admitted says so."""
    document, inputs = copy.deepcopy(acme_data)
    user = next(i for i in inputs if i["kind"] == "KafkaUser" and i["tenant"] == "payments")
    user["tenant"] = "marketing"
    data = tmp_path / "acme_data_test.rego"
    data.write_text(gen.module(document, inputs))
    code, ran = opa_test(data)
    assert code != 0
    assert ran["test_every_generated_object_is_admitted"].get("fail") is True
    assert set(ran) == declared_tests()


def test_generated_data_stays_out_of_the_shipped_library():
    """policies/ holds the library and its hand-written tests only (the wheel ships it; `opa test policies/` alone
    passes without generated files), and the generator refuses to write there."""
    assert not list((REPO_ROOT / "policies").rglob("*data_test.rego"))
    assert not list((REPO_ROOT / "policies").rglob("acme*.rego"))
    with pytest.raises(SystemExit, match="stays out of policies/"):
        gen.write(REPO_ROOT / "policies" / "mm2gov" / "admission" / "acme_data_test.rego")
