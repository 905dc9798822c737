"""`mm2gov devstack up|status|down` as a person runs it: detached processes, state, clean stop."""

from __future__ import annotations

import json
import socket

from devstack.process import group_members, pid_alive
from tests.conftest import run_cli


def _processes_of(run_dir) -> list[int]:
    from pathlib import Path

    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(run_dir).encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def test_up_status_down_leaves_nothing_behind(tmp_path):
    run_dir = tmp_path / "stack"
    up = run_cli("devstack", "up", "--only", "opa,kube", "--run-dir", str(run_dir), "--format", "json")
    assert up.returncode == 0, up.stderr
    described = json.loads(up.stdout)
    components = described["components"]
    assert {"opa", "etcd", "kube-apiserver"} <= set(components)
    assert all(components[name]["health"] == "ready" for name in ("opa", "etcd", "kube-apiserver"))
    pids = [info["pid"] for info in components.values()]
    assert all(pid_alive(pid) for pid in pids)  # they outlive the CLI process

    status = run_cli("devstack", "status", "--run-dir", str(run_dir))
    assert status.returncode == 0, status.stdout + status.stderr
    assert "kube-apiserver" in status.stdout and "ready" in status.stdout

    down = run_cli("devstack", "down", "--run-dir", str(run_dir))
    assert down.returncode == 0
    assert not any(pid_alive(pid) or group_members(pid) for pid in pids)
    assert _processes_of(run_dir) == []
    assert run_cli("devstack", "status", "--run-dir", str(run_dir)).returncode == 3


def test_port_conflict_fails_clearly_and_starts_nothing(tmp_path):
    run_dir = tmp_path / "stack"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli("devstack", "up", "--only", "opa,kube", "--port", f"etcd={port}",
                       "--run-dir", str(run_dir))
    assert done.returncode == 3
    assert f"error: etcd: port 127.0.0.1:{port} is already in use" in done.stderr
    assert "Traceback" not in done.stderr
    assert _processes_of(run_dir) == []  # OPA, started in parallel, was stopped again
