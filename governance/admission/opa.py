"""The webhook's OPA client: keep-alive HTTP/1.1, one connection per thread.

Not `governance.policy.opa.OpaEngine` (opa-python-client over requests), which starts OPA,
uploads policies and asks one repo decision per command: on the webhook's path, where every
review is one request, requests' overhead tripled the time to OPA's answer (about 1.0 ms
against 0.3 ms on loopback).
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
from typing import Any, BinaryIO
from urllib.parse import urlparse

from governance.errors import MM2GovError


class OpaConnection:
    """Keep-alive HTTP/1.1 to OPA, one connection per thread (a connection carries one request at a time).

    A small client rather than http.client, which writes a request's headers and body in two
    sends and parses response headers with the email package: together about 0.4 ms of every
    decision. Errors are OSError or http.client.HTTPException, as with http.client.
    """

    MAX_LINE = 65_536
    MAX_HEADERS = 100

    def __init__(self, url: str, timeout: float) -> None:
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise MM2GovError(f"invalid OPA URL {url!r}")
        self.host, self.port = parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80)
        self.host_header = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
        self.tls = ssl.create_default_context() if parsed.scheme == "https" else None
        self.timeout = timeout
        self._local = threading.local()

    def _connection(self) -> tuple[socket.socket, BinaryIO]:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_hostname=self.host)
            connection = self._local.connection = (sock, sock.makefile("rb"))
        return connection

    def _close(self) -> None:
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection[1].close()
            connection[0].close()

    def request(self, method: str, path: str, document: Any = None) -> tuple[int, bytes]:
        body = b"" if document is None else json.dumps(document).encode()
        message = (f"{method} {path} HTTP/1.1\r\nHost: {self.host_header}\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        for attempt in (1, 2):  # a keep-alive connection OPA closed is retried once, fresh
            try:
                sock, reader = self._connection()
                sock.sendall(message)  # one write: no wait for a delayed ACK between headers and body
                status, answer, keep = self._response(reader)
            except (OSError, http.client.HTTPException):
                self._close()
                if attempt == 2:
                    raise
                continue
            if not keep:
                self._close()
            return status, answer
        raise AssertionError("unreachable")

    def _line(self, reader: BinaryIO) -> bytes:
        line = reader.readline(self.MAX_LINE + 1)
        if len(line) > self.MAX_LINE:
            raise http.client.LineTooLong("OPA response line")
        return line

    def _response(self, reader: BinaryIO) -> tuple[int, bytes, bool]:
        """(status, body, whether the connection stays open) of one response."""
        line = self._line(reader)
        if not line:
            raise http.client.RemoteDisconnected("OPA closed the connection")
        version, _, rest = line.partition(b" ")
        try:
            status = int(rest[:3])
        except ValueError:
            raise http.client.BadStatusLine(line[:100].decode("latin-1")) from None
        if not version.startswith(b"HTTP/1.") or not 200 <= status < 600:  # no 1xx: no Expect is sent
            raise http.client.BadStatusLine(line[:100].decode("latin-1"))
        length, chunked, keep = -1, False, version == b"HTTP/1.1"
        for _ in range(self.MAX_HEADERS + 1):
            line = self._line(reader)
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.partition(b":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    raise http.client.HTTPException("bad Content-Length from OPA") from None
            elif name == b"transfer-encoding":
                chunked = value.endswith(b"chunked")
            elif name == b"connection":
                keep = value != b"close" and (keep or value == b"keep-alive")
        else:
            raise http.client.HTTPException("too many headers from OPA")
        if status in (204, 304):
            return status, b"", keep
        if chunked:
            return status, self._chunks(reader), keep
        if length >= 0:
            body = reader.read(length)
            if len(body) < length:
                raise http.client.IncompleteRead(body, length - len(body))
            return status, body, keep
        return status, reader.read(), False  # delimited by the end of the connection

    def _chunks(self, reader: BinaryIO) -> bytes:
        parts = []
        while True:
            try:
                size = int(self._line(reader).split(b";")[0], 16)
            except ValueError:
                raise http.client.HTTPException("bad chunk size from OPA") from None
            if size == 0:
                break
            part = reader.read(size + 2)
            if len(part) < size + 2:
                raise http.client.IncompleteRead(part, size + 2 - len(part))
            parts.append(part[:size])
        while self._line(reader) not in (b"\r\n", b"\n", b""):  # trailers
            pass
        return b"".join(parts)
