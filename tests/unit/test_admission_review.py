"""AdmissionReview parsing and the policy input: hostile bodies become BadReview, never an allow."""

from __future__ import annotations

import http.client
import json
import socket
import threading

import pytest

from governance.admission.decider import OpaConnection, parse_verdict
from governance.admission.review import (
    MAX_NESTING,
    BadReview,
    _depth_ok,
    denial_message,
    parse_review,
    policy_input,
    response,
)


def review(**request) -> bytes:
    base = {"uid": "u-1", "kind": {"group": "kafka.strimzi.io", "version": "v1", "kind": "KafkaMirrorMaker2"},
            "operation": "CREATE", "namespace": "kafka-cloud", "name": "f",
            "object": {"kind": "KafkaMirrorMaker2",
                       "metadata": {"name": "f", "labels": {"mm2gov.io/tenant": "payments"}},
                       "spec": {"mirrors": [{"topicsPattern": "payments\\..*, (bad", "groupsPattern": "payments-.*"}]}}}
    base.update(request)
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": base}).encode()


def test_a_well_formed_review_gives_the_policy_input_with_regex_facts():
    request = parse_review(review())
    document = policy_input(request, {"mm2gov.io/tenant": "ignored-object-label-wins"})
    assert document["tenant"] == "payments" and document["kind"] == "KafkaMirrorMaker2"
    assert document["patterns"]["payments\\..*"]["alternatives"] == [{"literal_prefix": "payments.", "exact": False}]
    assert "error" in document["patterns"]["(bad"]


def test_tenant_comes_from_the_namespace_when_the_object_has_no_label():
    request = parse_review(review(object={"kind": "KafkaMirrorMaker2", "metadata": {"name": "f"}, "spec": {}}))
    assert policy_input(request, {"mm2gov.io/tenant": "risk"})["tenant"] == "risk"
    assert policy_input(request, {})["tenant"] == ""


def test_update_reports_the_old_tenant():
    old = {"kind": "KafkaMirrorMaker2", "metadata": {"name": "f", "labels": {"mm2gov.io/tenant": "marketing"}},
           "spec": {}}
    request = parse_review(review(operation="UPDATE", oldObject=old))
    document = policy_input(request, {})
    assert (document["tenant"], document["old_tenant"]) == ("payments", "marketing")


def test_a_secret_reaches_the_policy_without_its_values():
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "labels": {"mm2gov.io/tenant": "p"}},
              "type": "Opaque", "data": {"password": "c2VjcmV0LXZhbHVl"}, "stringData": {"x": "plain-secret"}}
    request = parse_review(review(kind={"group": "", "version": "v1", "kind": "Secret"}, object=secret))
    document = policy_input(request, {})
    assert document["object"]["keys"] == ["password", "x"]
    assert "c2VjcmV0LXZhbHVl" not in json.dumps(document) and "plain-secret" not in json.dumps(document)


@pytest.mark.parametrize("body, uid", [
    (b"", None), (b"{", None), (b"[]", None), (b"null", None),
    (json.dumps({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview",
                 "request": {"uid": "x"}}).encode(), "x"),
    (review(uid=7), None), (review(uid=""), None), (review(uid="u" * 500), None),
    (review(kind="KafkaUser"), "u-1"), (review(operation="PATCH"), "u-1"), (review(object="text"), "u-1"),
    (review(object=None), "u-1"), (review(namespace=["a"]), "u-1"),
    (review(kind={"kind": "ConfigMap"}), "u-1"), (review(kind={"kind": "KafkaUser"}), "u-1"),
    (b"[" * 100_000 + b"]" * 100_000, None), (b'{"a":' * 5000 + b"1" + b"}" * 5000, None),
])
def test_malformed_reviews_are_refused_with_the_uid_when_readable(body, uid):
    with pytest.raises(BadReview) as refused:
        parse_review(body)
    assert refused.value.uid == uid


def test_oversized_body_is_refused_before_parsing():
    with pytest.raises(BadReview, match="over"):
        parse_review(b" " * (3 * 1024 * 1024 + 1))


@pytest.mark.parametrize("body", [
    b"", b"not json", b'{"result": null}', b'{"result": {"allowed": "yes", "violations": []}}',
    b'{"result": {"allowed": true}}', b'{"result": {"allowed": true, "violations": ["x"]}}',
    b'{"result": {"allowed": false, "violations": []}}', b"{}",
])
def test_anything_but_a_clean_decision_denies(body):
    assert parse_verdict(body).allowed is False


def test_a_clean_decision_allows_and_a_denial_lists_every_violation():
    assert parse_verdict(b'{"result": {"allowed": true, "violations": []}}').allowed is True
    verdict = parse_verdict(json.dumps({"result": {"allowed": False, "violations": [
        {"rule": "a", "message": "first"}, {"rule": "b", "message": "second"}]}}).encode())
    assert not verdict.allowed
    message = denial_message(list(verdict.violations))
    assert "[a] first" in message and "[b] second" in message
    answer = response("u-9", False, message)["response"]
    assert answer["uid"] == "u-9" and answer["status"]["code"] == 403


def _nested(depth: int) -> object:
    value: object = 1
    for level in range(depth - 1):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize("depth", [1, 2, MAX_NESTING - 1, MAX_NESTING])
def test_nesting_up_to_the_limit_passes(depth):
    assert _depth_ok(_nested(depth)) and _depth_ok([[], {}, _nested(depth - 1) if depth > 1 else 1])


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, MAX_NESTING + 2, 500])
def test_nesting_beyond_the_limit_fails(depth):
    assert not _depth_ok(_nested(depth)) and not _depth_ok({"a": 1, "b": [_nested(depth - 1)]})


class FakeOpa:
    """A loopback server answering each request with the next canned response; counts connections."""

    def __init__(self, answers: list[bytes]) -> None:
        self.answers = list(answers)
        self.connections = 0
        self.requests: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while self.answers:
            sock, _ = self.listener.accept()
            self.connections += 1
            with sock, sock.makefile("rb") as reader:
                while self.answers:
                    head = b""
                    while not head.endswith(b"\r\n\r\n"):
                        line = reader.readline()
                        if not line:
                            break
                        head += line
                    if not head:
                        break
                    length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
                                 .split(b":")[1])
                    self.requests.append(head + reader.read(length))
                    answer = self.answers.pop(0)
                    if answer == b"CLOSE":  # drop the keep-alive connection without answering
                        break
                    sock.sendall(answer)
                    if b"Connection: close" in answer:
                        break


def test_opa_client_reuses_one_connection_and_reads_chunked_answers():
    opa = FakeOpa([b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{\"result\":1}",
                   b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                   b"5;x=y\r\n{\"res\r\n7\r\nult\":2}\r\n0\r\n\r\n",
                   b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"])
    client = OpaConnection(opa.url, timeout=5)
    assert client.request("POST", "/v1/data/x", {"input": {"a": 1}}) == (200, b'{"result":1}')
    assert client.request("GET", "/v1/data/y") == (200, b'{"result":2}')
    assert client.request("DELETE", "/v1/data/z") == (404, b"")
    assert opa.connections == 1
    first = opa.requests[0]
    assert first.startswith(b"POST /v1/data/x HTTP/1.1\r\n") and first.endswith(b'\r\n\r\n{"input": {"a": 1}}')


def test_opa_client_reconnects_after_close_and_retries_a_dropped_keep_alive_once():
    opa = FakeOpa([b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
                   b"CLOSE",
                   b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]"])
    client = OpaConnection(opa.url, timeout=5)
    assert client.request("POST", "/a", {}) == (200, b"{}")
    assert client.request("POST", "/b", {}) == (200, b"[]")  # the dropped request is sent again, fresh
    assert opa.connections == 3


@pytest.mark.parametrize("answer", [
    b"garbage\r\n\r\n", b"HTTP/1.1 abc\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nConnection: close\r\n\r\nshort",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n",
])
def test_opa_client_refuses_a_malformed_answer(answer):
    opa = FakeOpa([answer, answer])
    with pytest.raises((OSError, http.client.HTTPException)):
        OpaConnection(opa.url, timeout=5).request("POST", "/v1/data/x", {})
