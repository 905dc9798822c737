"""An unreachable cluster is answered at once when nothing listens at any bootstrap server (a refused TCP
connection is definitive), and left to the Kafka client's own timeouts otherwise. Real sockets on loopback."""

from __future__ import annotations

import socket

from governance.kafka.admin import refused_everywhere


def closed_port() -> int:
    with socket.socket() as sock:  # bound, never listening, then closed: connections to it are refused
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_every_server_refusing_is_refused_everywhere():
    assert refused_everywhere(f"127.0.0.1:{closed_port()},127.0.0.1:{closed_port()}")


def test_one_listening_server_is_enough_to_ask_the_client():
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert not refused_everywhere(f"127.0.0.1:{closed_port()},127.0.0.1:{port}")


def test_a_name_that_does_not_resolve_is_left_to_the_client():
    assert not refused_everywhere("no-such-host.invalid:9092")
