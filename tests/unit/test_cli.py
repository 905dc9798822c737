import re

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


def test_unknown_component_is_named(tmp_path):
    done = run_cli("devstack", "up", "--only", "kafka,zookeeper", "--run-dir", str(tmp_path))
    assert done.returncode == 3
    assert re.search(r"unknown devstack component\(s\): zookeeper", done.stderr)
