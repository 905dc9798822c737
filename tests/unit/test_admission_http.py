"""The webhook's HTTP/1.1 (governance/admission/connection.py) on the real server, over TLS on raw sockets.

The server runs in this process (`WebhookServer`) with the real decider, a real OPA (started by
mm2gov, as `admission serve` starts it) holding the built-in policies and examples/acme, and the
acme namespaces. Requests are written byte by byte as a client would, in pieces; answers are read
with the standard library's parser (http.client), which shares nothing with llhttp. Malformed HTTP
gets its status and the end of the connection, never a traceback and never an allow; well-formed
requests, pipelined or in pieces, are answered in order. The hypothesis test derives hostile
requests from every allowed review.
"""

from __future__ import annotations

import http.client
import io
import itertools
import json
import logging
import shutil
import socket
import ssl
import threading
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devstack.files import write_private
from governance.admission.connection import MAX_HEAD_BYTES, MAX_HEADERS
from governance.admission.decider import AdmissionDecider
from governance.admission.envelope import MAX_BODY_BYTES
from governance.admission.server import WebhookServer, tls_context
from governance.policy.bundle import builtin_modules
from governance.policy.opa import OpaEngine
from governance.secrets.pki import issue_cert, new_ca
from tests.tools import acme_objects
from tests.tools.namespaces import StaticNamespaces

KNOWN = {200, 400, 404, 405, 411, 413, 415, 417, 431, 505}
SENTINEL = b"GET /healthz HTTP/1.1\r\nHost: webhook\r\nConnection: close\r\n\r\n"


@dataclass
class Served:
    port: int
    context: ssl.SSLContext
    errors: list[str]  # what reached socketserver's handle_error or was logged at ERROR: nothing may
    allowed: list[tuple[str, bytes]]  # (uid, AdmissionReview body) of admitted objects
    denied: tuple[str, bytes]

    def exchange(self, pieces: list[bytes]) -> list[tuple[int, dict[str, str], bytes]]:
        """Write `pieces` one write each (a piece is a TLS record of its own), read until the server closes;
        the answers, as the standard library parses them."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as sock, \
                self.context.wrap_socket(sock, server_hostname="127.0.0.1") as tls:
            for piece in pieces:
                try:
                    tls.sendall(piece)
                except OSError:  # the server refused what came before and closed: read its answer
                    break
            received = b""
            try:
                while chunk := tls.recv(65536):  # a timeout here (10 s) is a server that did not close: a failure
                    received += chunk
            except (ConnectionResetError, ssl.SSLEOFError):  # closed with our unread pieces in its buffer
                pass
        return parse_answers(received)


class _Unclosable(io.BytesIO):
    def close(self) -> None:  # http.client closes its file after each answer; the next answer is in it too
        pass


def parse_answers(raw: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    stream = _Unclosable(raw)
    sock = type("Sock", (), {"makefile": lambda self, *args, **kwargs: stream})()
    answers = []
    while stream.tell() < len(raw):
        response = http.client.HTTPResponse(sock)  # type: ignore[arg-type]
        response.begin()  # skips a 100 Continue
        answers.append((response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()))
    return answers


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("webhook-http")
    repo = root / "acme"
    shutil.copytree(acme_objects.ACME, repo)
    with OpaEngine(builtin_modules()) as opa:  # mm2gov's own OPA, the built-in policies loaded from disk
        assert opa.url is not None
        objects = acme_objects.allowed_objects(repo)  # decided by an OPA of its own, as `generate` does
        allowed = [(f"ok-{i}", json.dumps(acme_objects.admission_review(obj, f"ok-{i}")).encode())
                   for i, obj in enumerate(objects)]
        topic = next(o for o in objects if o["kind"] == "KafkaTopic")
        nobody = {**topic, "metadata": {**topic["metadata"], "name": "nobody.topic"},
                  "spec": {**topic["spec"], "topicName": "nobody.topic"}}
        denied = ("no-1", json.dumps(acme_objects.admission_review(nobody, "no-1")).encode())
        decider = AdmissionDecider(repo, opa.url, StaticNamespaces(acme_objects.namespaces(repo)))
        assert decider.sync.load() and decider.readiness()[0]
        ca = new_ca("test CA")
        pair = issue_cert(ca, "webhook", server=True, ip_addresses=("127.0.0.1",))
        write_private(root / "tls.crt", pair.cert_pem())
        write_private(root / "tls.key", pair.key_pem())
        server = WebhookServer(("127.0.0.1", 0), decider, tls_context(root / "tls.crt", root / "tls.key"))
        errors: list[str] = []
        server.handle_error = lambda request, address: errors.append("handle_error")  # type: ignore[method-assign]

        class Errors(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                errors.append(record.getMessage())

        recorder = Errors(logging.ERROR)
        logging.getLogger("mm2gov").addHandler(recorder)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield Served(server.server_address[1], ssl.create_default_context(cadata=ca.cert_pem().decode()),
                         errors, allowed, denied)
        finally:
            server.shutdown()
            server.server_close()
            logging.getLogger("mm2gov").removeHandler(recorder)
            decider.stop()


def post(body: bytes, headers: list[tuple[bytes, bytes]] | None = None, *, version: bytes = b"HTTP/1.1",
         method: bytes = b"POST") -> bytes:
    """A request for /validate as the API server writes one; `headers` replaces the default ones."""
    if headers is None:
        headers = [(b"Host", b"webhook"), (b"Content-Type", b"application/json"),
                   (b"Content-Length", str(len(body)).encode())]
    return (method + b" /validate?timeout=10s " + version + b"\r\n"
            + b"".join(name + b": " + value + b"\r\n" for name, value in headers) + b"\r\n" + body)


def verdict(answer: tuple[int, dict[str, str], bytes]) -> tuple[str, bool]:
    status, _, body = answer
    assert status == 200, answer
    review = json.loads(body)["response"]
    return review["uid"], review["allowed"]


def assert_refused(served: Served, answers, statuses: set[int]) -> None:
    """One answer, a refusal among `statuses`, that closes the connection; nothing logged as an error."""
    assert len(answers) == 1, answers
    status, headers, body = answers[0]
    assert status in statuses and headers.get("connection") == "close", answers
    assert "error" in json.loads(body)
    assert served.errors == []


def test_reviews_pipelined_in_pieces_are_answered_in_order(served):
    (uid, body), (bad_uid, bad) = served.allowed[0], served.denied
    stream = post(body) + b"GET /healthz HTTP/1.1\r\nHost: w\r\n\r\n" + post(bad) + SENTINEL
    pieces = [stream[i:i + 7] for i in range(0, len(stream), 7)]
    answers = served.exchange(pieces)
    assert [a[0] for a in answers] == [200, 200, 200, 200]
    assert verdict(answers[0]) == (uid, True) and answers[1][2] == b"ok\n" and verdict(answers[2]) == (bad_uid, False)
    assert answers[3][1]["connection"] == "close" and served.errors == []


def test_an_http_1_0_request_is_answered_and_closed(served):
    uid, body = served.allowed[1]
    [answer] = served.exchange([post(body, version=b"HTTP/1.0")])
    assert verdict(answer) == (uid, True) and answer[1]["connection"] == "close"


def test_expect_100_continue_gets_its_interim_answer_before_the_body(served):
    uid, body = served.allowed[2]
    head, _, rest = post(body, [(b"Host", b"w"), (b"Content-Type", b"application/json"),
                                (b"Content-Length", str(len(body)).encode()), (b"Expect", b"100-continue")]
                         ).partition(b"\r\n\r\n")
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock, \
            served.context.wrap_socket(sock, server_hostname="127.0.0.1") as tls:
        tls.sendall(head + b"\r\n\r\n")
        assert tls.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"  # before the body is sent
        tls.sendall(rest + SENTINEL)
        received = b""
        while chunk := tls.recv(65536):
            received += chunk
    answers = parse_answers(received)
    assert verdict(answers[0]) == (uid, True) and answers[1][2] == b"ok\n"


def _chunked(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


def _headers(body: bytes, *extra: tuple[bytes, bytes], length: bytes | None = None) -> list[tuple[bytes, bytes]]:
    base = [(b"Host", b"w"), (b"Content-Type", b"application/json")]
    if length is not None:
        base.append((b"Content-Length", length))
    return [*base, *extra]


MALFORMED = {
    "no Content-Length": (lambda b: post(b, _headers(b)), {411}),
    "chunked": (lambda b: post(_chunked(b), _headers(b, (b"Transfer-Encoding", b"chunked"))), {411}),
    "chunked and a length": (lambda b: post(_chunked(b), _headers(b, (b"Transfer-Encoding", b"chunked"),
                                                                  length=str(len(b)).encode())), {400}),
    "gzip": (lambda b: post(b, _headers(b, (b"Transfer-Encoding", b"gzip"), length=str(len(b)).encode())), {400, 411}),
    "negative length": (lambda b: post(b, _headers(b, length=b"-1")), {400}),
    "hex length": (lambda b: post(b, _headers(b, length=b"0x10")), {400}),
    "two lengths": (lambda b: post(b, _headers(b, (b"Content-Length", b"2"), length=str(len(b)).encode())), {400}),
    "a length beyond the limit": (lambda b: post(b, _headers(b, length=str(MAX_BODY_BYTES + 1).encode())), {413}),
    "an overflowing length": (lambda b: post(b, _headers(b, length=b"9" * 30)), {400}),
    "HTTP/2.0": (lambda b: post(b, version=b"HTTP/2.0"), {505}),
    "HTTP/1.2": (lambda b: post(b, version=b"HTTP/1.2"), {400, 505}),
    "no version": (lambda b: post(b, version=b""), {400}),
    "a lower-case method": (lambda b: post(b, method=b"post"), {400}),
    "a folded header": (lambda b: post(b, _headers(b, (b"X-A", b"a\r\n b"), length=str(len(b)).encode())), {400}),
    "a space before the colon": (lambda b: post(b, _headers(b, (b"X-A ", b"a"), length=str(len(b)).encode())), {400}),
    "a NUL in a value": (lambda b: post(b, _headers(b, (b"X-A", b"a\x00b"), length=str(len(b)).encode())), {400}),
    "a header given twice": (lambda b: post(b, _headers(b, (b"Host", b"x"), length=str(len(b)).encode())), {400}),
    "bare line feeds": (lambda b: post(b).replace(b"\r\n", b"\n"), {400}),
    "too many headers": (lambda b: post(b, _headers(b, *[(b"X-%d" % i, b"y") for i in range(MAX_HEADERS)],
                                                    length=str(len(b)).encode())), {431}),
    "a header too long": (lambda b: post(b, _headers(b, (b"X-A", b"y" * MAX_HEAD_BYTES),
                                                     length=str(len(b)).encode())), {431}),
    "a target too long": (lambda b: post(b).replace(b"/validate?", b"/validate?" + b"a" * MAX_HEAD_BYTES), {431}),
    "an unknown expectation": (lambda b: post(b, _headers(b, (b"Expect", b"gzip"), length=str(len(b)).encode())),
                               {417}),
    "an upgrade": (lambda b: post(b, _headers(b, (b"Connection", b"Upgrade"), (b"Upgrade", b"websocket"),
                                              length=str(len(b)).encode())), {400}),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_http_gets_its_status_and_the_connection_closed(served, case):
    build, statuses = MALFORMED[case]
    assert_refused(served, served.exchange([build(served.allowed[0][1]), SENTINEL]), statuses)


def test_a_head_that_never_ends_is_refused_before_it_is_held(served):
    endless = b"POST /validate HTTP/1.1\r\nX-A: " + b"y" * (4 * MAX_HEAD_BYTES)  # no CRLF: httptools holds it
    assert_refused(served, served.exchange([endless[i:i + 16384] for i in range(0, len(endless), 16384)]), {431})


def test_a_body_that_is_not_json_is_refused_and_the_connection_kept(served):
    uid, body = served.allowed[0]
    typed = post(body, _headers(body, length=str(len(body)).encode())).replace(b"application/json", b"text/plain")
    answers = served.exchange([typed, post(body), SENTINEL])
    assert [a[0] for a in answers] == [415, 200, 200] and verdict(answers[1]) == (uid, True)


# ---- hostile requests derived from every allowed one ---------------------------------------------

@dataclass(frozen=True)
class Hostile:
    which: int  # the allowed review it is derived from (modulo their number)
    malformation: str  # a key of MALFORMED, or "shorter"/"longer": a Content-Length that is not the body's
    delta: int  # how many bytes shorter or longer
    before: int  # valid requests pipelined before it
    cuts: tuple[int, ...]  # the lengths of the pieces it is written in (the rest in one piece)


hostile = st.builds(Hostile, st.integers(0, 10_000), st.sampled_from([*sorted(MALFORMED), "shorter", "longer"]),
                    st.integers(1, 64), st.integers(0, 2), st.lists(st.integers(1, 300), max_size=8).map(tuple))


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=hostile)
def test_hostile_requests_derived_from_allowed_ones_are_never_allowed(served, case):
    """Each allowed review, made hostile, after 0-2 valid pipelined requests and before the sentinel, written in
    pieces cut anywhere. The valid requests are answered first, in order; the hostile one is never allowed; a
    malformed one gets its refusal and the connection closes (the sentinel is never read); one whose length
    is not its body's is answered as a body that is not a review, and the connection ends closed."""
    uid, body = served.allowed[case.which % len(served.allowed)]
    good_uid, good = served.allowed[(case.which + 1) % len(served.allowed)]
    refusal: set[int] | None = None
    if case.malformation == "shorter":  # the rest of the body and the sentinel are read as the next request
        mutant = post(body, _headers(body, length=str(len(body) - case.delta).encode()))
    elif case.malformation == "longer":  # padded to the declared length with bytes that are not JSON
        mutant = post(body, _headers(body, length=str(len(body) + case.delta).encode())) + b"x" * case.delta
    else:
        build, refusal = MALFORMED[case.malformation]
        mutant = build(body)
    stream = post(good) * case.before + mutant + SENTINEL
    ends = sorted({min(sum(case.cuts[: i + 1]), len(stream)) for i in range(len(case.cuts))} | {0, len(stream)})
    answers = served.exchange([stream[a:b] for a, b in itertools.pairwise(ends)])
    assert served.errors == []
    assert {a[0] for a in answers} <= KNOWN, answers
    assert [verdict(a) for a in answers[: case.before]] == [(good_uid, True)] * case.before
    rest = answers[case.before:]
    assert rest, "no answer to the hostile request"
    assert not any(a[0] == 200 and a[2].startswith(b'{"apiVersion"') and json.loads(a[2])["response"]["allowed"]
                   for a in rest), (mutant[:300], rest)
    assert uid not in b"".join(a[2] for a in rest).decode()  # never even judged: the review was not what was read
    assert rest[-1][1].get("connection") == "close"  # the last answer says so; exchange() read until the close
    if refusal is not None:
        assert_refused(served, rest, refusal)
