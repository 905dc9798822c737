"""mm2gov's one OPA client: keep-alive HTTP/1.1 to OPA's REST API, answers parsed by httptools.

The webhook (one decision per review, the governance repo pushed as data) and the CLI's `OpaEngine`
(policies uploaded, one repo decision per command) both talk to OPA through `OpaConnection`.
Answers are parsed by httptools (llhttp, the parser of Node.js), not by hand: status line,
headers, Content-Length or chunked bodies. A request leaves in one write with TCP_NODELAY
(headers and body in two writes wait for the server's delayed ACK). One connection per thread,
one request at a time on it.

Every failure to get a well-formed answer (OPA unreachable, a timeout, a connection closed
mid-answer, an answer that is not HTTP/1.1, or larger than the limits below) is `OpaUnavailable`;
a keep-alive connection that OPA closed while idle is retried once on a fresh one, and nothing else is.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import httptools

from governance.errors import RuntimeFailure

MAX_HEAD_BYTES = 64 * 1024  # status line and headers of one answer
MAX_HEADERS = 100
MAX_BODY_BYTES = 512 * 1024 * 1024  # a repo decision with thousands of flows is tens of MB
RECV_BYTES = 64 * 1024  # below malloc's mmap threshold: a recv buffer is not an mmap and munmap each time


class OpaUnavailable(RuntimeFailure):
    """OPA gave no well-formed answer: unreachable, timed out, closed the connection, or malformed.
    `cause` says which in a few words, without the URL (what the webhook's denials may tell a user)."""

    def __init__(self, message: str, cause: str = "") -> None:
        super().__init__(message)
        self.cause = cause or message


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes

    def json(self) -> Any:
        """The body as JSON; a body that is not JSON is OpaUnavailable (OPA always answers JSON)."""
        try:
            return json.loads(self.body)
        except ValueError:
            raise OpaUnavailable(f"OPA answered HTTP {self.status} with a body that is not JSON",
                                 "an answer that is not JSON") from None


class _Dropped(Exception):
    """The connection ended before the first byte of the answer (a keep-alive connection OPA closed)."""


class _Refused(Exception):
    """The answer breaks a limit or is not one answer to one request."""


class _Answer:
    """httptools' protocol for one answer: collects status, framing, body and keep-alive."""

    def __init__(self, reader: _Reader) -> None:
        self.reader = reader
        self.headers = 0
        self.framed = False  # Content-Length or Transfer-Encoding: the body does not end with the connection
        self.head_done = self.done = self.keep = False
        self.messages = 0
        self.size = 0
        self.parts: list[bytes] = []

    def on_message_begin(self) -> None:
        self.messages += 1
        if self.messages > 1:
            raise _Refused("more than one answer to one request")

    def on_header(self, name: bytes, _value: bytes) -> None:
        self.headers += 1
        if self.headers > MAX_HEADERS:
            raise _Refused(f"more than {MAX_HEADERS} headers")
        if name.lower() in (b"content-length", b"transfer-encoding"):
            self.framed = True

    def on_headers_complete(self) -> None:
        self.head_done = True
        if self.reader.parser.get_status_code() < 200:  # no Expect is sent: no interim answer is due
            raise _Refused("an interim (1xx) answer")

    def on_body(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > MAX_BODY_BYTES:
            raise _Refused(f"a body over {MAX_BODY_BYTES} bytes")
        self.parts.append(data)

    def on_message_complete(self) -> None:
        self.done = True
        self.keep = self.reader.parser.should_keep_alive()


class _Reader:
    """One answer read from a socket: (Answer, whether the connection may carry another request)."""

    def __init__(self) -> None:
        self.answer = _Answer(self)
        self.parser = httptools.HttpResponseParser(self.answer)

    def read(self, sock: socket.socket) -> tuple[Answer, bool]:
        answer, head = self.answer, 0
        while not answer.done:
            try:
                data = sock.recv(RECV_BYTES)
            except (ConnectionResetError, ConnectionAbortedError) as exc:
                if head == 0:
                    raise _Dropped from exc
                raise
            if not data:
                if head == 0:
                    raise _Dropped
                if answer.head_done and not answer.framed:  # the body ended with the connection
                    return Answer(self.parser.get_status_code(), b"".join(answer.parts)), False
                raise OpaUnavailable("OPA closed the connection in the middle of an answer", "a truncated answer")
            if not answer.head_done:
                head += len(data)
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserError as exc:
                why = exc.__context__ if isinstance(exc.__context__, _Refused) else exc
                raise OpaUnavailable(f"OPA's answer is not well-formed HTTP/1.1: {why}", "a malformed answer") from None
            if not answer.head_done and head > MAX_HEAD_BYTES:
                raise OpaUnavailable(f"OPA's answer has a head over {MAX_HEAD_BYTES} bytes", "a malformed answer")
        return Answer(self.parser.get_status_code(), b"".join(answer.parts)), answer.keep


def request_bytes(method: str, path: str, host: str, body: bytes, content_type: str) -> bytes:
    """One request, head and body, as it goes on the wire."""
    return (f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode("ascii") + body


class OpaConnection:
    """Keep-alive HTTP/1.1 to OPA at `url` (http or https), one connection per thread; `close` closes all."""

    def __init__(self, url: str, timeout: float) -> None:
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise OpaUnavailable(f"invalid OPA URL {url!r}: expected http(s)://host:port")
        self.url = url.rstrip("/")
        self.host, self.port = parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80)
        self.host_header = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
        self.tls = ssl.create_default_context() if parsed.scheme == "https" else None
        self.timeout = timeout
        self._local = threading.local()
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def request(self, method: str, path: str, document: Any = None, *, body: bytes | None = None,
                content_type: str = "application/json") -> Answer:
        """`method path` with `document` as JSON (or `body` as is); the answer, whatever its status."""
        if body is None:
            body = b"" if document is None else json.dumps(document, separators=(",", ":")).encode()
        message = request_bytes(method, path, self.host_header, body, content_type)
        sock, reused = self._socket()
        try:
            return self._exchange(sock, message)
        except _Dropped:
            if not reused:
                raise OpaUnavailable("OPA closed the connection without answering", "no answer") from None
        sock, _ = self._socket()  # OPA closed the idle keep-alive connection: once more, on a fresh one
        try:
            return self._exchange(sock, message)
        except _Dropped:
            raise OpaUnavailable("OPA closed the connection without answering", "no answer") from None

    def _exchange(self, sock: socket.socket, message: bytes) -> Answer:
        try:
            try:
                sock.sendall(message)  # one write: no wait for a delayed ACK between head and body
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise _Dropped from exc
            answer, keep = _Reader().read(sock)
        except _Dropped:
            self._drop(sock)
            raise
        except OSError as exc:
            self._drop(sock)
            raise OpaUnavailable(f"OPA at {self.url} did not answer ({type(exc).__name__})",
                                 type(exc).__name__) from None
        except OpaUnavailable:
            self._drop(sock)
            raise
        if not keep:
            self._drop(sock)
        return answer

    def _socket(self) -> tuple[socket.socket, bool]:
        """This thread's connection and whether it carried a request before (opened if there is none)."""
        sock: socket.socket | None = getattr(self._local, "sock", None)
        if sock is not None:
            return sock, True
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_hostname=self.host)
        except OSError as exc:
            raise OpaUnavailable(f"OPA unreachable at {self.url} ({type(exc).__name__})",
                                 type(exc).__name__) from None
        self._local.sock = sock
        with self._lock:
            self._open.add(sock)
        return sock, False

    def _drop(self, sock: socket.socket) -> None:
        if getattr(self._local, "sock", None) is sock:
            self._local.sock = None
        with self._lock:
            self._open.discard(sock)
        sock.close()

    def close(self) -> None:
        """Close every thread's connection (a thread that asks again gets a new one)."""
        with self._lock:
            open_, self._open = self._open, set()
        for sock in open_:
            sock.close()
        self._local = threading.local()
