import signal
import socket
import sys
from pathlib import Path

import pytest

from devstack.process import (
    DevstackError,
    ManagedProcess,
    ensure_port_free,
    pid_alive,
    stop_pid,
)


def test_port_in_use_is_one_clear_line():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(DevstackError) as taken:
            ensure_port_free(port, "kafka-source")
    assert str(taken.value).startswith(f"kafka-source: port 127.0.0.1:{port} is already in use")
    assert "\n" not in str(taken.value)


def test_process_that_dies_while_starting_reports_its_log(tmp_path):
    process = ManagedProcess("broken", [sys.executable, "-c", "print('bad config line 3'); raise SystemExit(4)"],
                             tmp_path / "broken.log")
    process.start()
    with pytest.raises(DevstackError) as died:
        process.wait_ready(lambda: False, timeout=30, what="never")
    assert "broken exited with code 4" in str(died.value)
    assert "bad config line 3" in str(died.value)


def test_stop_kills_the_whole_process_group(tmp_path):
    script = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']);" \
             " print('child started', flush=True); time.sleep(300)"
    process = ManagedProcess("parent", [sys.executable, "-c", script, str(tmp_path)], tmp_path / "p.log")
    pid = process.start()
    process.wait_ready(lambda: "child started" in (tmp_path / "p.log").read_text(), 30, "child")
    children = [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    assert children
    assert stop_pid(pid, timeout=10, must_contain=str(tmp_path))
    process.popen.wait(5)
    assert not any(pid_alive(child) for child in children)


def test_stop_refuses_a_process_that_is_not_ours(tmp_path):
    process = ManagedProcess("other", [sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "o.log")
    pid = process.start()
    try:
        assert not stop_pid(pid, must_contain="/some/other/run/dir")
        assert pid_alive(pid)
    finally:
        process.stop()
    assert not pid_alive(pid)


def test_after_exit_sees_the_exit_code_whichever_way_the_process_was_stopped(tmp_path):
    """stop(), or stop_pid by PID and then reap() (the stack's `down`): after_exit runs once the process has ended,
    with its code (devstack/cds.py keeps a JVM's class archive only after a clean end)."""
    seen: list[int | None] = []
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    by_stop = ManagedProcess("a", sleeper, tmp_path / "a.log", after_exit=seen.append)
    by_stop.start()
    by_stop.reap()
    assert seen == []  # still running: nothing to collect
    by_stop.stop()
    by_pid = ManagedProcess("b", sleeper, tmp_path / "b.log", after_exit=seen.append)
    pid = by_pid.start()
    assert stop_pid(pid, timeout=10)
    by_pid.reap()
    assert seen == [-signal.SIGTERM, -signal.SIGTERM]
