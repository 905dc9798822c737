"""An unreachable cluster is answered at once when nothing listens at any bootstrap server (a refused TCP
connection is definitive), and left to the Kafka client's own timeouts otherwise. Real sockets on loopback."""

from __future__ import annotations

import socket
from concurrent.futures import Future

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from governance.errors import EXIT_RUNTIME, RuntimeFailure
from governance.kafka.admin import answer, refused_everywhere

EVERY_ACL = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,  # type: ignore[arg-type]
                             AclOperation.ANY, AclPermissionType.ANY)


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


def test_a_request_the_cluster_never_answers_is_one_runtime_failure_naming_it():
    """A server that accepts connections and never speaks: the client's own request timeout answers first."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{silent.getsockname()[1]}"})
        with pytest.raises(RuntimeFailure, match=r"^describe ACLs: _TIMED_OUT: ") as failed:
            answer(admin.describe_acls(EVERY_ACL, request_timeout=1.0), "describe ACLs")
        assert failed.value.exit_code == EXIT_RUNTIME


def test_no_answer_within_the_wait_is_a_runtime_failure_not_a_traceback():
    """A future nobody completes stands in for a client that misses its own timeout (librdkafka answers within
    its request timeout, which `answer` outwaits: the real client cannot be made to miss it)."""
    with pytest.raises(RuntimeFailure, match=r"^create ACL x: no answer from the cluster in 0 s; "):
        answer(Future(), "create ACL x", wait=0.1)


def test_an_ignored_error_is_no_answer():
    future: Future[object] = Future()
    future.set_exception(KafkaException(KafkaError(KafkaError.GROUP_ID_NOT_FOUND)))
    assert answer(future, "committed offsets", ignore=("GROUP_ID_NOT_FOUND",)) is None
    future = Future()
    future.set_exception(KafkaException(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED)))
    with pytest.raises(RuntimeFailure, match=r"^committed offsets: GROUP_AUTHORIZATION_FAILED: "):
        answer(future, "committed offsets", ignore=("GROUP_ID_NOT_FOUND",))
