"""A broker whose chosen port is taken between choosing and binding starts again on new ports (devstack/kafka.py).

The race is real on a busy machine (another process's outgoing connection takes a port from the same ephemeral
range after `free_port` chose it); it cannot be made to happen on demand, so this test makes it: the first time
the broker's port is checked free, the check passes and then a listening socket takes the port, before the JVM
binds it. That socket is a stand-in for the other process, nothing else is: the broker is a real Kafka 4, and
its own log says it found the port taken.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from devstack import kafka
from devstack.kafka import BIND_FAILURE, KafkaCluster
from devstack.process import DevstackError, free_port
from governance.kafka.admin import admin_client, create_topics
from governance.process import LOOPBACK
from governance.secrets.values import random_password

pytestmark = pytest.mark.integration


@pytest.fixture
def taker(monkeypatch) -> Iterator[list[socket.socket]]:
    """After the first check of a port, listen on it (the other process); every later check is the real one."""
    taken: list[socket.socket] = []
    real = kafka.ensure_port_free

    def check_then_take(port: int, component: str) -> None:
        real(port, component)
        if not taken:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOOPBACK, port))
            sock.listen()
            taken.append(sock)

    monkeypatch.setattr(kafka, "ensure_port_free", check_then_take)
    yield taken
    for sock in taken:
        sock.close()


def cluster(stack, run_dir, ports_chosen: bool) -> KafkaCluster:
    return KafkaCluster(
        name="race", run_dir=run_dir, ca=stack.ca, ca_pem_path=stack.ca_pem_path, admin_password=random_password(),
        controller_password=random_password(), store_password=random_password(), port=free_port(),
        controller_port=free_port(), ports_chosen=ports_chosen)


def test_a_taken_chosen_port_gives_a_broker_on_new_ports(stack, tmp_path, taker):
    broker = cluster(stack, tmp_path, ports_chosen=True)
    first_port = broker.port
    try:
        broker.start()
        [sock] = taker
        assert sock.getsockname()[1] == first_port  # the port was really taken while the broker started
        assert broker.port != first_port
        assert BIND_FAILURE in broker.home.joinpath("kafka.log").read_text(errors="replace")
        create_topics(admin_client(broker.admin_config()), ["race.ok"])  # a working, authenticated broker
        assert "race.ok" in admin_client(broker.admin_config()).list_topics(timeout=10).topics
    finally:
        if broker.process:
            broker.process.stop()


def test_a_port_asked_for_is_never_changed(stack, tmp_path, taker):
    """A port the user asked for (not chosen by the stack) is the user's: the start fails, it does not move."""
    broker = cluster(stack, tmp_path, ports_chosen=False)
    asked = broker.port
    try:
        with pytest.raises(DevstackError):
            broker.start(timeout=30)
        assert broker.port == asked
        assert BIND_FAILURE in broker.home.joinpath("kafka.log").read_text(errors="replace")
    finally:
        if broker.process:
            broker.process.stop()


def test_a_chosen_port_taken_before_the_check_gives_a_broker_on_new_ports(stack, tmp_path):
    """The other process got there first: the port is taken when the broker checks it, not only when the JVM
    binds it (a session stack of `make test` once failed so: its source broker never started)."""
    broker = cluster(stack, tmp_path, ports_chosen=True)
    first_port = broker.port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind((LOOPBACK, first_port))
        other.listen()
        try:
            broker.start()
            assert broker.port != first_port
            create_topics(admin_client(broker.admin_config()), ["race.early"])  # a working, authenticated broker
            assert "race.early" in admin_client(broker.admin_config()).list_topics(timeout=10).topics
        finally:
            if broker.process:
                broker.process.stop()


def test_a_port_asked_for_and_taken_before_the_check_is_one_message(stack, tmp_path):
    """A port the user asked for stays the user's: the start fails naming it, nothing is started."""
    broker = cluster(stack, tmp_path, ports_chosen=False)
    asked = broker.port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind((LOOPBACK, asked))
        other.listen()
        with pytest.raises(DevstackError, match=rf"^kafka-race: port {LOOPBACK}:{asked} is already in use"):
            broker.start(timeout=30)
    assert broker.port == asked and broker.process is None
