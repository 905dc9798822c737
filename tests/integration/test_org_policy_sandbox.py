"""Organisation rules (REPO/policies/*.rego) run in a sandbox, checked with the real OPA.

A module may only add a package mm2gov.rules.<name> (not a built-in family) and use pure
builtins; the OPA mm2gov starts has no environment to leak through opa.runtime().env.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from devstack import tools
from devstack.opa import OpaServer
from governance.policy import bundle
from governance.policy.bundle import PolicyModule, builtin_modules
from governance.policy.engine import PolicySyntaxError
from governance.policy.opa import OpaEngine
from tests.conftest import REPO_ROOT, run_cli

ACME = REPO_ROOT / "examples" / "acme"
CANARY = "secret-canary-123"
HEADER = "package mm2gov.rules.myorg\n\nimport data.mm2gov.lib.input as lib\n\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    target = tmp_path / "repo"
    shutil.copytree(ACME, target)
    return target


def validate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("validate", str(repo), *args, env={"MM2GOV_TEST_CANARY": CANARY}, timeout=120)


def refused(repo: Path, text: str, name: str = "evil.rego") -> str:
    """Add the module, run validate: exit 2, one message, no traceback; return stderr."""
    (repo / "policies" / name).write_text(text)
    done = validate(repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "organisation policy refused" in done.stderr or "policy does not compile (OPA)" in done.stderr
    assert CANARY not in done.stdout + done.stderr
    return done.stderr


def test_acme_org_rule_still_loads_and_works(repo):
    text = (repo / "tenants/hr.yaml").read_text().replace("hr-systems@acme.example", "hr@elsewhere.example")
    (repo / "tenants/hr.yaml").write_text(text)
    done = validate(repo, "--format", "json", "--fail-on", "medium")
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    assert [v["rule"] for v in found["violations"]] == ["acme_owner_domain"]
    assert validate(ACME).returncode == 0


def test_redefining_a_library_helper_is_refused(repo):
    stderr = refused(repo, "package mm2gov.lib.names\n\n# every prefix 'ends with a separator'\n"
                           "ends_with_separator(_) := true\n")
    assert "policies/evil.rego:1: package mm2gov.lib.names is not allowed" in stderr


@pytest.mark.parametrize("package", ["mm2gov.rules.prefixes", "mm2gov.rules.grants", "mm2gov.scopes", "mm2gov",
                                     "mm2gov.rules", "mm2gov.rules.myorg.deeper", "mm2gov.admission.rules.x",
                                     "acme"])
def test_packages_outside_the_org_namespace_are_refused(repo, package):
    stderr = refused(repo, f"# a comment first\npackage {package}\n\nx := 1\n")
    assert f"policies/evil.rego:2: package {package} " in stderr


def test_built_in_families_are_read_from_the_library():
    families = bundle.builtin_rule_families()
    assert {"prefixes", "grants", "flows", "principals", "classification"} <= families
    assert "acme_owners" not in families


@pytest.mark.parametrize("line, builtin", [
    ('\tmsg := sprintf("%v", [opa.runtime().env])', "opa.runtime"),
    ('\tresponse := http.send({"method": "get", "url": "http://169.254.169.254/"})\n\tmsg := response.body',
     "http.send"),
    ('\tmsg := concat(",", net.lookup_ip_addr("example.com"))', "net.lookup_ip_addr"),
    ('\tmsg := json.marshal(rego.parse_module("x.rego", "package x"))', "rego.parse_module"),
    ('\tmsg := json.marshal(io.jwt.decode(tenant.owners[0]))', "io.jwt.decode"),
    ('\tmsg := sprintf("%d", [rand.intn("x", 10)])', "rand.intn"),
    ('\tmsg := "x" with time.now_ns as opa.runtime', "opa.runtime"),  # a builtin as a `with` replacement
])
def test_forbidden_builtins_are_refused(repo, line, builtin):
    text = (HEADER + 'violations contains lib.violation("x", "low", name, msg, "") if {\n'
            "\tsome name, tenant in input.tenants\n" + line + "\n}\n")
    stderr = refused(repo, text)
    row = text.splitlines().index(line.splitlines()[0]) + 1
    assert f"policies/evil.rego:{row}: {builtin} is not allowed in organisation rules" in stderr


def test_opa_itself_refuses_what_the_capabilities_lack(tmp_path):
    """The second line of defence: OPA compiles built-ins + module without the forbidden builtins."""
    module = tmp_path / "policies" / "evil.rego"
    module.parent.mkdir()
    module.write_text("package mm2gov.rules.myorg\n\nx := http.send({})\n\ny := opa.runtime()\n")
    opa = tools.opa()
    capabilities = bundle._capabilities(str(opa))
    staging = tmp_path / "staged"
    staging.mkdir()
    staged = bundle._stage([PolicyModule("policies/evil.rego", module)], staging)
    problems = bundle._compile_problems(opa, capabilities, {"http.send", "opa.runtime"}, staged,
                                        bundle.BUILTIN_DIR, staging)
    assert problems == [  # named by the module's id in the repo, never by the copy OPA read
        "policies/evil.rego:3: rego_type_error: undefined function http.send (not allowed in organisation rules: "
        "it reaches the network (exfiltration, cloud metadata endpoints))",
        "policies/evil.rego:5: rego_type_error: undefined function opa.runtime (not allowed in organisation rules: "
        "it exposes the OPA process's environment and configuration (CI secrets))"]


def test_strict_mode_and_syntax_errors_name_the_line(repo):
    stderr = refused(repo, HEADER + "x := 1 if {\n\tunused := 2\n\ttrue\n}\n")
    assert stderr.startswith("error: policy does not compile (OPA):\n")
    assert "  policies/evil.rego:6: rego_compile_error: assigned var unused unused\n" in stderr
    stderr = refused(repo, HEADER + "x := \n")
    assert "  policies/evil.rego:6: rego_parse_error:" in stderr


def test_allow_list_names_builtins_of_this_opa():
    names = {b["name"] for b in bundle._capabilities(str(tools.opa()))["builtins"]}
    assert names >= bundle.ALLOWED_BUILTINS
    for refused_name in ("opa.runtime", "http.send", "net.lookup_ip_addr", "rego.parse_module", "io.jwt.decode",
                         "io.jwt.encode_sign", "json.match_schema", "providers.aws.sign_req", "uuid.rfc4122"):
        assert refused_name in names and not bundle.is_allowed_builtin(refused_name)


def test_a_good_module_passes_the_check(tmp_path):
    module = tmp_path / "policies" / "good.rego"
    module.parent.mkdir()
    module.write_text(HEADER + 'violations contains lib.violation("long_name", "low", name, msg, "") if {\n'
                               "\tsome name, _ in input.tenants\n\tcount(name) > 40\n"
                               '\tmsg := sprintf("tenant %s: name longer than 40", [name])\n}\n')
    assert bundle.org_modules((module,), tmp_path) == [PolicyModule("policies/good.rego", module)]
    with pytest.raises(PolicySyntaxError, match=r"policies/gone\.rego"):
        bundle.check_org_modules([PolicyModule("policies/gone.rego", tmp_path / "policies" / "gone.rego")])


def environ(pid: int) -> dict[str, str]:
    items = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in items if item)


def test_managed_opa_has_an_empty_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MM2GOV_TEST_CANARY", CANARY)
    monkeypatch.delenv("GOGC", raising=False)
    probe = tmp_path / "probe.rego"
    probe.write_text("package probe\n\nenv := opa.runtime().env\n")
    with OpaEngine(builtin_modules()) as engine:
        assert environ(engine._process.pid) == {"GOGC": "400"}
        # what a module that got past the sandbox check would see (uploaded here without the check)
        engine.use_extra_modules([PolicyModule("probe.rego", probe)])
        seen = requests.get(f"{engine.url}/v1/data/probe/env", timeout=10).json()["result"]
    assert seen == {"GOGC": "400"}
    assert CANARY not in json.dumps(seen)


def test_devstack_opa_has_an_empty_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MM2GOV_TEST_CANARY", CANARY)
    monkeypatch.setenv("GOGC", "250")  # $GOGC still wins
    server = OpaServer(tmp_path, log_level="error")
    server.start()
    try:
        assert environ(server.process.pid) == {"GOGC": "250"}
    finally:
        server.stop()


def test_an_external_opa_keeps_no_part_of_rules_it_refused(tmp_path):
    """With --opa-url, the organisation modules are uploaded one by one; when OPA refuses one, those it took
    before are removed too when the command ends: an OPA that other commands share never keeps half a
    repo's rules (before, only a complete upload was remembered, and so removed)."""
    good, bad = tmp_path / "good.rego", tmp_path / "bad.rego"
    good.write_text(HEADER + 'violations contains lib.violation("x", "low", "", "m", "") if false\n')
    bad.write_text(HEADER + "violations contains v if {\n\tv := \n}\n")
    server = OpaServer(tmp_path / "opa", log_level="error")
    server.start()
    try:
        with OpaEngine(builtin_modules(), url=server.url) as engine, pytest.raises(PolicySyntaxError):
            engine.use_extra_modules([PolicyModule("org/good.rego", good), PolicyModule("org/bad.rego", bad)])
        ids = {policy["id"] for policy in requests.get(f"{server.url}/v1/policies", timeout=10).json()["result"]}
    finally:
        server.stop()
    assert ids and not {"org/good.rego", "org/bad.rego"} & ids
