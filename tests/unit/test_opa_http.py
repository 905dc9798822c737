"""mm2gov's one OPA client (governance/policy/opa_http.py), used by the webhook and the CLI's OpaEngine.

Against a real OPA: data and policies written, read and removed, decisions asked, answers large
enough to come chunked, one connection reused, an OPA restart (its idle keep-alive connections
dropped) survived by one fresh retry, an OPA that is down refused at once. Faults a real OPA
cannot be made to produce on cue (a truncated answer, a garbage status line, bad chunks, an
answer that never ends, two answers to one request) come from `BrokenOpa`, a stand-in that
writes fixed bytes on a loopback socket.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading

import pytest

from devstack.opa import OpaServer
from devstack.process import free_port
from governance.policy.bundle import PolicyModule
from governance.policy.engine import PolicySyntaxError
from governance.policy.opa import OpaEngine
from governance.policy.opa_http import MAX_HEAD_BYTES, MAX_HEADERS, OpaConnection, OpaUnavailable

POLICY = b"package t\n\nallow if input.a == 1\n"


@pytest.fixture(scope="module")
def opa(tmp_path_factory):
    server = OpaServer(tmp_path_factory.mktemp("opa"), log_level="error")
    server.start()
    yield server
    server.stop()


def test_policies_data_and_decisions_go_through_one_kept_connection(opa):
    client = OpaConnection(opa.url, timeout=10)
    try:
        assert client.request("PUT", "/v1/policies/t.rego", body=POLICY, content_type="text/plain").status == 200
        assert client.request("POST", "/v1/data/t/allow", {"input": {"a": 1}}).json() == {"result": True}
        assert client.request("POST", "/v1/data/t/allow", {"input": {"a": 2}}).json() == {}  # undefined
        assert client.request("PUT", "/v1/data/d", {"k": ["v"]}).status == 204
        assert client.request("GET", "/v1/data/d").json() == {"result": {"k": ["v"]}}
        assert client.request("DELETE", "/v1/data/d").status == 204
        assert client.request("GET", "/v1/data/d").json() == {}
        assert client.request("DELETE", "/v1/policies/t.rego").status == 200
        missing = client.request("DELETE", "/v1/policies/t.rego")
        assert missing.status == 404 and missing.json()["code"] == "resource_not_found"
        assert len(client._open) == 1  # every request above on the same connection
    finally:
        client.close()
    assert client._open == set()


def test_an_answer_too_large_for_one_write_comes_chunked_and_reads_whole(opa):
    document = {f"key-{i}": "v" * 100 for i in range(2000)}  # ~230 KB: Go's server streams it chunked
    client = OpaConnection(opa.url, timeout=10)
    try:
        assert client.request("PUT", "/v1/data/big", document).status == 204
        assert client.request("GET", "/v1/data/big").json() == {"result": document}
    finally:
        client.close()
    oracle = http.client.HTTPConnection("127.0.0.1", opa.port, timeout=10)  # the stdlib says how it was framed
    oracle.request("GET", "/v1/data/big")
    response = oracle.getresponse()
    assert response.chunked and json.loads(response.read()) == {"result": document}
    oracle.close()


def test_a_restarted_opa_is_asked_again_once_on_a_fresh_connection(opa):
    client = OpaConnection(opa.url, timeout=10)
    try:
        assert client.request("GET", "/health").status == 200
        dropped = client._local.sock
        opa.stop()  # the kept connection dies with the process
        opa.start()
        assert client.request("GET", "/health").status == 200
        assert client._local.sock is not dropped and len(client._open) == 1
    finally:
        client.close()


def test_an_opa_that_is_down_is_unavailable():
    client = OpaConnection(f"http://127.0.0.1:{free_port()}", timeout=5)
    with pytest.raises(OpaUnavailable, match="unreachable"):
        client.request("GET", "/health")


@pytest.mark.parametrize("url", ["127.0.0.1:8181", "ftp://127.0.0.1", "http://"])
def test_an_opa_url_without_scheme_or_host_is_refused(url):
    with pytest.raises(OpaUnavailable, match="invalid OPA URL"):
        OpaConnection(url, timeout=1)


def test_the_cli_engine_names_the_file_and_line_of_a_module_opa_refuses(opa, tmp_path):
    (tmp_path / "bad.rego").write_text("package org.bad\n\ndeny contains msg if {\n  msg :=\n}\n")
    with OpaEngine([], opa.url) as engine, \
            pytest.raises(PolicySyntaxError, match=r"org/bad\.rego:\d+: rego_parse_error"):
        engine.use_extra_modules([PolicyModule("org/bad.rego", tmp_path / "bad.rego")])


class BrokenOpa:
    """A stand-in for OPA, for faults the real one cannot be made to produce on cue: each connection reads
    one request and is answered with the next of `answers` (fixed bytes); b"" closes without answering."""

    def __init__(self, answers: list[bytes]) -> None:
        self.answers = list(answers)
        self.requests: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.answers:
            sock, _ = self.listener.accept()
            with sock:
                received = b""
                while b"\r\n\r\n" not in received:
                    received += sock.recv(65536)
                head, _, body = received.partition(b"\r\n\r\n")
                length = int(next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
                             .split(b":")[1])
                while len(body) < length:
                    body += sock.recv(65536)
                self.requests.append(received)
                sock.sendall(self.answers.pop(0))
        self.listener.close()


@pytest.mark.parametrize(("answer", "why"), [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n{\"result\"", "in the middle of an answer"),
    (b"garbage\r\n\r\n", "not well-formed"),
    (b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", "not well-formed"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not well-formed"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "not well-formed"),
    (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", "interim"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200 OK\r\n", "more than one answer"),
    (b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (MAX_HEADERS + 1) + b"Content-Length: 0\r\n\r\n", "headers"),
    (b"HTTP/1.1 200 OK\r\nX: " + b"y" * MAX_HEAD_BYTES, "head over"),
    (b"", "without answering"),
])
def test_a_broken_answer_is_unavailable_and_never_retried(answer, why):
    opa = BrokenOpa([answer, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"])
    client = OpaConnection(opa.url, timeout=5)
    with pytest.raises(OpaUnavailable, match=why):
        client.request("POST", "/v1/data/x", {"input": {}})
    assert len(opa.requests) == 1  # a fresh connection that failed is not asked again
    assert client._open == set()


def test_an_answer_ended_by_the_connection_is_read_to_its_end():
    opa = BrokenOpa([b"HTTP/1.1 200 OK\r\n\r\n{\"result\": 1}"])
    client = OpaConnection(opa.url, timeout=5)
    answer = client.request("POST", "/v1/data/x", {"input": {}})
    assert (answer.status, answer.json()) == (200, {"result": 1}) and client._open == set()


def test_a_request_leaves_in_one_piece_with_its_length():
    opa = BrokenOpa([b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"])
    client = OpaConnection(opa.url, timeout=5)
    assert client.request("POST", "/v1/data/x", {"input": {"a": 1}}).body == b"{}"
    [sent] = opa.requests
    host = opa.url.removeprefix("http://")
    assert sent == (b"POST /v1/data/x HTTP/1.1\r\nHost: " + host.encode() + b"\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 17\r\n\r\n{\"input\":{\"a\":1}}")
    assert client._open == set()  # Connection: close is honoured


def test_an_answer_that_never_comes_times_out():
    listener = socket.create_server(("127.0.0.1", 0))  # accepts (the backlog does) and never answers
    try:
        client = OpaConnection(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=0.2)
        with pytest.raises(OpaUnavailable, match="TimeoutError"):
            client.request("GET", "/health")
    finally:
        listener.close()
