import re
import sys

import pytest

from governance import __version__
from tests.conftest import run_cli


def test_version():
    done = run_cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"mm2gov, version {__version__}"


def test_help_lists_commands_and_exit_codes():
    done = run_cli("--help")
    assert done.returncode == 0
    assert "devstack" in done.stdout and "demo" in done.stdout
    assert "Exit codes: 0 ok, 1 violations" in done.stdout


def test_unknown_command_is_usage_error_exit_2():
    done = run_cli("frobnicate")
    assert done.returncode == 2
    assert "No such command" in done.stderr and "Traceback" not in done.stderr


def test_bad_port_option_is_usage_error_exit_2():
    done = run_cli("devstack", "up", "--port", "opa=notaport")
    assert done.returncode == 2
    assert "expected COMPONENT=PORT" in done.stderr and "Traceback" not in done.stderr


def test_status_without_a_stack_is_runtime_error_exit_3(tmp_path):
    done = run_cli("devstack", "status", "--run-dir", str(tmp_path))
    assert done.returncode == 3
    assert done.stderr.strip() == f"error: no stack state in {tmp_path}: `mm2gov devstack up` first"


def test_missing_java_is_one_line_exit_3(tmp_path):
    env = {"PATH": str(tmp_path), "JAVA_HOME": ""}
    done = run_cli("devstack", "up", "--only", "kafka", "--run-dir", str(tmp_path / "run"), env=env)
    assert done.returncode == 3
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Java 17+ not found" in errors[0]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("args", [("devstack", "up", "--only", "opa"), ("devstack", "down"), ("demo", "--keep")])
def test_without_a_checkout_the_stack_commands_say_where_the_stack_is(monkeypatch, tmp_path, args):
    """An installed mm2gov has no devstack/ beside its package (tests/integration/test_wheel.py runs the wheel)."""
    from governance.cli import stack
    from tests.tools.in_process import run_in_process

    monkeypatch.setattr(stack, "CHECKOUT", tmp_path)
    monkeypatch.delitem(sys.modules, "devstack", raising=False)
    done = run_in_process(*args, "--run-dir", str(tmp_path / "run"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == ["error: " + stack.NOT_INSTALLED.format(command=args[0])]
    assert not (tmp_path / "run").exists()


def test_unknown_component_is_named(tmp_path):
    done = run_cli("devstack", "up", "--only", "kafka,zookeeper", "--run-dir", str(tmp_path))
    assert done.returncode == 3
    assert re.search(r"unknown devstack component\(s\): zookeeper", done.stderr)


BAD = "examples/bad/grant_write"  # a high violation: a grant of write access to another tenant
ACTING = {  # every command that acts on a repo's tenancy, with the options it needs to get that far
    "generate": ["generate", BAD, "--out", "{tmp}/out"],
    "apply": ["apply", BAD, "--secrets-dir", "{tmp}/secrets", "--dry-run"],
    "drift": ["drift", BAD, "--secrets-dir", "{tmp}/secrets"],
    "audit": ["audit", BAD, "--out", "{tmp}/out", "--secrets-dir", "{tmp}/secrets"],
    "failover": ["failover", "payments", "--from", "onprem", "--to", "cloud", "--repo", BAD, "--secrets-dir",
                 "{tmp}/secrets"],
    "probe": ["probe", "payments", "--repo", BAD, "--secrets-dir", "{tmp}/secrets"],
}


def test_every_command_that_acts_on_a_repo_refuses_one_with_high_violations_alike(tmp_path):
    """Issue 25: they all act on the policy decision, so a repo the policy refuses gets one answer from each:
    the violation, the refusal line, exit 1, before any cluster is contacted or file written."""
    from tests.tools.in_process import run_in_process

    answers = {}
    for command, argv in ACTING.items():
        done = run_in_process(*(a.format(tmp=tmp_path) for a in argv))
        answers[command] = (done.returncode, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "")
        assert "grant_write" in done.stderr and "Traceback" not in done.stderr, (command, done.stderr)
    assert set(answers.values()) == {(1, "error: refusing to act on a repo with high or critical violations")}, answers
    assert not (tmp_path / "out").exists()
