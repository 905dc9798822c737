"""HTTP/1.1 on one webhook connection: requests parsed by httptools, each answer written in one piece.

httptools (llhttp, the parser of Node.js) reads the request line, headers and body; this module
adds the limits a webhook needs and answers in one `sendall` (with TCP_NODELAY on the socket,
head and body written apart would wait for the client's delayed ACK: 40 ms per request from a Go
client such as the API server).

Limits, each a clear status and the end of the connection (`Refused`), never a traceback:
a request line and headers over MAX_HEAD_BYTES or MAX_HEADERS (431), a header given twice (400),
a body over the caller's limit, as declared or as read (413), a POST without Content-Length or
with Transfer-Encoding (411: the API server always sends a length), an HTTP version other than
1.0/1.1 (505), a protocol upgrade or an Expect other than 100-continue (400, 417), and anything
llhttp finds malformed (400). Keep-alive as the request asks; pipelined requests are answered one
at a time, in order.
"""

from __future__ import annotations

import socket
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http import HTTPStatus

import httptools

MAX_HEAD_BYTES = 64 * 1024
MAX_HEADERS = 100
RECV_BYTES = 64 * 1024
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


@dataclass(frozen=True)
class Request:
    method: str
    target: str  # the path and query as sent
    headers: dict[str, str]  # by lower-cased name; each name once
    body: bytes
    keep_alive: bool

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").partition(";")[0].strip().lower()


class Refused(Exception):
    """A request that is not served: answer `status` with `why` and close the connection."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status
        self.why = why


def answer_bytes(status: int, body: bytes, content_type: str, close: bool = False) -> bytes:
    """One answer, head and body, as it goes on the wire."""
    return (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n"
            ).encode("latin-1") + body


class _Message:
    """httptools' protocol: the request being read, and the requests read whole (in order)."""

    def __init__(self, max_body: int, send: Callable[[bytes], None]) -> None:
        self.max_body = max_body
        self.send = send
        self.parser = httptools.HttpRequestParser(self)
        self.ready: deque[Request] = deque()
        self.head_done = False
        self.completed = 0  # requests read whole so far
        self._reset()

    def _reset(self) -> None:
        self.head_size = 0  # the request line and headers read so far, as httptools hands them over
        self.url: list[bytes] = []
        self.headers: dict[str, str] = {}
        self.body: list[bytes] = []
        self.size = 0

    def on_message_begin(self) -> None:
        self._reset()

    def _grow_head(self, size: int) -> None:
        self.head_size += size
        if self.head_size > MAX_HEAD_BYTES:
            raise Refused(431, f"a request line and headers of at most {MAX_HEAD_BYTES} bytes")

    def on_url(self, part: bytes) -> None:
        self._grow_head(len(part))
        self.url.append(part)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._grow_head(len(name) + len(value) + 4)  # ": " and CRLF
        if len(self.headers) >= MAX_HEADERS:
            raise Refused(431, f"more than {MAX_HEADERS} headers")
        key = name.decode("latin-1").lower()
        if key in self.headers:  # two readers could read two different requests
            raise Refused(400, f"header {key[:64]!r} given twice")
        self.headers[key] = value.decode("latin-1").strip()

    def on_headers_complete(self) -> None:
        self.head_done = True
        parser, headers = self.parser, self.headers
        version = parser.get_http_version()
        if version not in ("1.0", "1.1"):  # llhttp reads HTTP/0.9 (no version at all), 2.0 and 3.0 too
            raise Refused(400 if version == "0.9" else 505, "HTTP/1.0 or HTTP/1.1 only")
        if parser.should_upgrade():
            raise Refused(400, "no protocol upgrade here")
        if "transfer-encoding" in headers:
            raise Refused(411, "a body with a Content-Length only (no Transfer-Encoding)")
        declared = headers.get("content-length")
        if declared is None and parser.get_method() == b"POST":
            raise Refused(411, "a POST needs a Content-Length")
        if declared is not None and int(declared) > self.max_body:  # llhttp accepts digits only
            raise Refused(413, f"a body of at most {self.max_body} bytes")
        expect = headers.get("expect")
        if expect is not None:
            if expect.lower() != "100-continue" or version != "1.1":
                raise Refused(417, "Expect: 100-continue only")
            if not self.ready:  # never ahead of answers still due on this connection (pipelined requests)
                self.send(CONTINUE)  # the client waits for it, or for its own timeout, before it sends the body

    def on_body(self, part: bytes) -> None:
        self.size += len(part)
        if self.size > self.max_body:
            raise Refused(413, f"a body of at most {self.max_body} bytes")
        self.body.append(part)

    def on_message_complete(self) -> None:
        self.ready.append(Request(self.parser.get_method().decode("ascii"), b"".join(self.url).decode("latin-1"),
                                  self.headers, b"".join(self.body), self.parser.should_keep_alive()))
        self.head_done = False
        self.completed += 1


class HttpConnection:
    """The requests arriving on `sock` (connected, TLS done), one at a time; `send` answers one."""

    def __init__(self, sock: socket.socket, max_body: int) -> None:
        self.sock = sock
        self.message = _Message(max_body, sock.sendall)

    def requests(self) -> Iterator[Request]:
        """Each request read whole, in order, until the client closes; `Refused` for one that is not served
        (the requests read before it are given first)."""
        message, head = self.message, 0
        while True:
            while message.ready:
                yield message.ready.popleft()
            data = self.sock.recv(RECV_BYTES)
            if not data:
                return  # the client is done (a request it broke off gets no answer: it cannot read one)
            completed = message.completed
            if not message.head_done:
                head += len(data)
            try:
                message.parser.feed_data(data)
            except httptools.HttpParserUpgrade:
                refusal = Refused(400, "no protocol upgrade here")
            except httptools.HttpParserError as exc:
                context = exc.__context__
                refusal = context if isinstance(context, Refused) else Refused(400, f"malformed request: {exc}")
            else:
                if message.completed != completed or message.head_done:
                    head = 0  # a head ended in this piece: the next one is counted from the next piece
                    continue
                if head <= MAX_HEAD_BYTES:
                    continue
                # httptools holds a header until it ends (on_header counts it then): one that never ends stops here
                refusal = Refused(431, f"a request line and headers of at most {MAX_HEAD_BYTES} bytes")
            while message.ready:
                yield message.ready.popleft()
            raise refusal

    def send(self, status: int, body: bytes, content_type: str, close: bool = False) -> None:
        self.sock.sendall(answer_bytes(status, body, content_type, close))
