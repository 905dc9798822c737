"""A Go server (OPA: mm2gov's own and the stack's; Prometheus and Alertmanager share the code) whose chosen
port is taken between choosing and binding starts again on a new one (governance/process.py
`start_on_free_port`); a port the caller named is never moved.

The race is real on a busy machine (another process's outgoing connection takes a port from the same ephemeral
range after `free_port` chose it); it cannot be made to happen on demand, so these tests make it: the first
port chosen is taken at once by a listening socket, a stand-in for the other process. Nothing else is: OPA is
the real server, and its own log says it found the port taken.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from devstack import opa
from devstack.opa import OpaServer
from governance import process
from governance.policy.bundle import builtin_modules
from governance.policy.opa import OpaEngine
from governance.process import BIND_FAILURE, LOOPBACK, ProcessError


@pytest.fixture
def taker(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[socket.socket]]:
    """The first port `free_port` chooses is then taken (the other process); later choices are the real ones."""
    taken: list[socket.socket] = []
    real = process.free_port

    def choose_then_take() -> int:
        port = real()
        if not taken:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOOPBACK, port))
            sock.listen()
            taken.append(sock)
        return port

    monkeypatch.setattr(process, "free_port", choose_then_take)
    yield taken
    for sock in taken:
        sock.close()


def taken_port(taker: list[socket.socket]) -> int:
    [sock] = taker
    return int(sock.getsockname()[1])


def test_mm2gov_s_own_opa_starts_on_another_port_and_decides(taker: list[socket.socket]) -> None:
    with OpaEngine(builtin_modules()) as engine:
        assert engine.url is not None and not engine.url.endswith(f":{taken_port(taker)}")
        assert engine.client is not None and engine.client.request("GET", "/health").status == 200


def test_the_stack_s_opa_starts_on_another_port_and_its_log_says_why(taker: list[socket.socket],
                                                                     tmp_path: Path) -> None:
    server = OpaServer(tmp_path, log_level="error")
    try:
        server.start()
        assert server.port != taken_port(taker)
        assert server.is_ready()
        assert BIND_FAILURE in (tmp_path / "opa" / "opa.log").read_text()
    finally:
        server.stop()


def test_a_port_asked_for_is_never_changed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Taken after the check that it is free, before OPA binds it: the start fails, on the port asked for."""
    asked = process.free_port()
    other = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    real = opa.ensure_port_free

    def check_then_take(port: int, component: str) -> None:
        real(port, component)
        other.bind((LOOPBACK, port))
        other.listen()

    monkeypatch.setattr(opa, "ensure_port_free", check_then_take)
    server = OpaServer(tmp_path, asked, log_level="error")
    try:
        with pytest.raises(ProcessError, match="opa exited with code 1 while starting"):
            server.start(timeout=20)
        assert server.port == asked
        assert (tmp_path / "opa" / "opa.log").read_text().count(BIND_FAILURE) == 1  # one attempt only
    finally:
        other.close()
