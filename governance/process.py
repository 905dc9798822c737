"""Managed subprocesses: started in their own session with a log file, stopped by PID.

Used by mm2gov itself (the OPA server it starts for a command) and by the local stack
(the checkout's `devstack`, which re-exports this module)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from governance.errors import RuntimeFailure

LOOPBACK = "127.0.0.1"


class ProcessError(RuntimeFailure):
    """A managed process (OPA, a component of the local stack) could not be started or reached."""


def free_port() -> int:
    """A port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def ensure_port_free(port: int, component: str) -> None:
    """Nothing listens on `port` (connections of a stopped server lingering in TIME_WAIT do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            raise ProcessError(
                f"{component}: port {LOOPBACK}:{port} is already in use; "
                "stop what listens there or choose another port"
            ) from None


BIND_FAILURE = "address already in use"  # what a Go server (OPA, Prometheus, Alertmanager, etcd, kube-apiserver) logs
START_ATTEMPTS = 3


def start_on_free_port(process_for: Callable[[int], ManagedProcess], ready: Callable[[int], bool],
                       timeout: float, what: str, port: int = 0) -> tuple[ManagedProcess, int]:
    """Start `process_for(port)` and wait until `ready(port)`; the process and its port.

    `port` 0: one chosen free here. Another process can take it between the choice and the server's bind (an
    outgoing connection gets a port from the same ephemeral range); the server then logs BIND_FAILURE and
    exits, and starts again on a new free port, up to START_ATTEMPTS times. A port the caller named is not
    changed: that failure is the caller's to see."""
    for attempt in range(1, START_ATTEMPTS + 1):
        chosen = port or free_port()
        process = process_for(chosen)
        log_start = process.log_path.stat().st_size if process.log_path.exists() else 0
        process.start()
        try:
            process.wait_ready(lambda port=chosen: ready(port), timeout, f"{what} on {LOOPBACK}:{chosen}")
            return process, chosen
        except ProcessError:
            process.stop()
            if port or attempt == START_ATTEMPTS or not _logged_since(process.log_path, log_start, BIND_FAILURE):
                raise
    raise AssertionError("unreachable")


def _logged_since(log_path: Path, start: int, text: str) -> bool:
    try:
        with open(log_path, "rb") as log:
            log.seek(start)
            return text in log.read().decode(errors="replace")
    except OSError:
        return False


def port_open(port: int, host: str = LOOPBACK) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


@dataclass
class ManagedProcess:
    """One server process with its log in the run directory."""

    name: str
    argv: list[str]
    log_path: Path
    cwd: Path | None = None
    env: dict[str, str] | None = None
    after_exit: Callable[[int | None], None] | None = None  # with the exit code, once stop() or reap() sees it end
    popen: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self) -> int:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            try:
                self.popen = subprocess.Popen(
                    self.argv,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=self.cwd,
                    env={**os.environ, **(self.env or {})},
                    start_new_session=True,  # its own process group: stop kills children too
                )
            except OSError as exc:
                raise ProcessError(f"{self.name}: cannot start {self.argv[0]}: {exc.strerror}") from None
        return self.popen.pid

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def exit_code(self) -> int | None:
        return self.popen.poll() if self.popen else None

    def wait_ready(self, probe: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll `probe` until it is true; fail with the log's tail if the process dies or time runs out."""
        deadline = time.monotonic() + timeout
        while True:
            code = self.exit_code()
            if code is not None:
                raise ProcessError(
                    f"{self.name} exited with code {code} while starting; "
                    f"last lines of {self.log_path}:\n{tail(self.log_path)}"
                )
            try:
                if probe():
                    return
            except Exception:  # noqa: BLE001 - a probe that raises is just "not ready yet"
                pass
            if time.monotonic() > deadline:
                raise ProcessError(
                    f"{self.name} did not become ready ({what}) within {timeout:.0f}s; "
                    f"last lines of {self.log_path}:\n{tail(self.log_path)}"
                )
            time.sleep(0.3)

    def stop(self, timeout: float = 20) -> None:
        if self.popen is not None:
            stop_pid(self.popen.pid, timeout)
            self.popen.wait(timeout=5)
            self.reap()

    def reap(self) -> None:
        """Collect the exit of a process that has ended (by stop(), or stopped by PID elsewhere) and run its
        after_exit; nothing while it runs."""
        if self.popen is not None and self.popen.poll() is not None and self.after_exit is not None:
            self.after_exit(self.popen.returncode)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group `pgid`."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(stat.parent.name))
    return members


def pid_command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def stop_pid(pid: int, timeout: float = 20, must_contain: str | None = None) -> bool:
    """SIGTERM the process group led by `pid`, SIGKILL after `timeout`.

    `must_contain` guards against a recycled PID: the process is only signalled
    when its command line contains that text (the stack's run directory).
    Returns whether a process was stopped.
    """
    if not pid_alive(pid):
        return False
    if must_contain and must_contain not in pid_command_line(pid):
        return False
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return True
        except PermissionError:
            os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not group_members(pid):
                return True
            time.sleep(0.1)
    return not group_members(pid)
