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

from devstack import kube, opa
from devstack.kube import KubeApiServer
from devstack.opa import OpaServer
from governance import process
from governance.policy.bundle import builtin_modules
from governance.policy.opa import OpaEngine
from governance.process import BIND_FAILURE, LOOPBACK, ProcessError
from governance.secrets.pki import new_ca
from governance.secrets.values import random_password


def take_chosen_port(monkeypatch: pytest.MonkeyPatch, nth: int = 1) -> list[socket.socket]:
    """The `nth` port `free_port` chooses is then taken (the other process); every other choice is the real one.
    Returns the list that holds the taking socket once it is taken."""
    taken: list[socket.socket] = []
    real = process.free_port
    calls = []

    def choose_then_take() -> int:
        port = real()
        calls.append(port)
        if len(calls) == nth:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOOPBACK, port))
            sock.listen()
            taken.append(sock)
        return port

    monkeypatch.setattr(process, "free_port", choose_then_take)
    monkeypatch.setattr(kube, "free_port", choose_then_take)  # the etcd peer port is chosen in devstack/kube.py
    return taken


@pytest.fixture
def taker(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[socket.socket]]:
    taken = take_chosen_port(monkeypatch)
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


@pytest.mark.integration
@pytest.mark.parametrize(("nth", "log"), [(1, "etcd.log"), (3, "kube-apiserver.log")],
                         ids=["etcd-client-port", "apiserver-port"])
def test_the_stack_s_kube_apiserver_and_etcd_start_on_other_ports(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path, nth: int, log: str) -> None:
    """Ports are chosen in this order: etcd's client port, its peer port, the apiserver's."""
    taken = take_chosen_port(monkeypatch, nth)
    ca = new_ca("port race CA")
    ca_pem = tmp_path / "ca.pem"
    ca_pem.write_bytes(ca.cert_pem())
    server = KubeApiServer(run_dir=tmp_path, ca=ca, ca_pem_path=ca_pem, admin_token=random_password(),
                           apply_strimzi_crds=False)
    try:
        server.start(timeout=120)
        assert taken_port(taken) not in (server.port, server.etcd_port, server.etcd_peer_port)
        assert server.is_ready()
        assert BIND_FAILURE in (server.home / log).read_text(errors="replace")
    finally:
        server.stop()
        for sock in taken:
            sock.close()
