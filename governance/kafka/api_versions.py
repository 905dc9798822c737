"""The wire edge of the broker-compatibility check: each broker's ApiVersions answer, read by hand.

Why by hand: confluent-kafka keeps ApiVersions inside librdkafka; Kafka's `BrokerApiVersionsCommand` would
need a JVM per cluster and a properties file holding the admin password, and prints no features.
ApiVersions is answered before SASL authentication (KIP-43), so this check sends no credential at all: TLS
with the cluster's CA only. The verdicts are `kafka/version.py`'s (pure).
"""

from __future__ import annotations

import socket
import ssl
import struct
from collections.abc import Iterable, Mapping
from typing import Any

from governance.errors import RuntimeFailure
from governance.kafka.version import BrokerVersions, Verdict, flow_verdicts, refusal

API_VERSIONS_KEY = 18
UNSUPPORTED_VERSION = 35
TIMEOUT = 10.0


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _skip_tags(data: bytes, pos: int) -> int:
    count, pos = _uvarint(data, pos)
    for _ in range(count):
        _, pos = _uvarint(data, pos)
        size, pos = _uvarint(data, pos)
        pos += size
    return pos


def parse_response(body: bytes, version: int) -> tuple[int, dict[int, tuple[int, int]], dict[str, int]]:
    """An ApiVersions response body (after the correlation id): error code, API ranges, finalized features.

    A broker that does not speak `version` answers in the v0 layout with UNSUPPORTED_VERSION and its ranges.
    """
    (error,) = struct.unpack_from(">h", body, 0)
    pos, apis, features = 2, {}, {}
    if version < 3 or error == UNSUPPORTED_VERSION:
        (count,), pos = struct.unpack_from(">i", body, pos), pos + 4
        for _ in range(max(count, 0)):
            key, low, high = struct.unpack_from(">hhh", body, pos)
            apis[key], pos = (low, high), pos + 6
        return error, apis, features
    count, pos = _uvarint(body, pos)
    for _ in range(count - 1):
        key, low, high = struct.unpack_from(">hhh", body, pos)
        apis[key] = (low, high)
        pos = _skip_tags(body, pos + 6)
    pos += 4  # throttle_time_ms
    tags, pos = _uvarint(body, pos)
    for _ in range(tags):
        tag, pos = _uvarint(body, pos)
        size, pos = _uvarint(body, pos)
        if tag == 2:  # FinalizedFeatures: [name, max_version_level, min_version_level]
            entries, at = _uvarint(body, pos)
            for _ in range(entries - 1):
                length, at = _uvarint(body, at)
                name = body[at:at + length - 1].decode()
                (level,) = struct.unpack_from(">h", body, at + length - 1)
                at = _skip_tags(body, at + length - 1 + 4)
                features[name] = level
        pos += size
    return error, apis, features


def _request(version: int, correlation: int) -> bytes:
    client = b"mm2gov"
    header = struct.pack(">hhih", API_VERSIONS_KEY, version, correlation, len(client)) + client
    if version >= 3:  # flexible: header and body tagged fields, client software name and version
        software = b"mm2gov"
        header += b"\x00"
        header += bytes([len(software) + 1]) + software + bytes([2]) + b"1" + b"\x00"
    return struct.pack(">i", len(header)) + header


def _exchange(sock: socket.socket, version: int) -> bytes:
    sock.sendall(_request(version, version))
    size_bytes = _recv(sock, 4)
    (size,) = struct.unpack(">i", size_bytes)
    return _recv(sock, size)[4:]  # drop the response header (correlation id; ApiVersions uses header v0)


def _recv(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("connection closed (a broker older than 0.10 has no ApiVersions)")
        data += chunk
    return data


def tls_context(config: Mapping[str, Any]) -> ssl.SSLContext | None:
    """TLS as the cluster's client config asks (CA inline or as a file); None for a plaintext protocol."""
    if not str(config.get("security.protocol", "PLAINTEXT")).endswith("SSL"):
        return None
    context = ssl.create_default_context(cafile=config.get("ssl.ca.location"), cadata=config.get("ssl.ca.pem"))
    context.check_hostname = config.get("ssl.endpoint.identification.algorithm", "https") == "https"
    return context


def read_broker(address: str, config: Mapping[str, Any]) -> BrokerVersions:
    """Ask one broker for its ApiVersions (v3, else the v0 ranges it answers with)."""
    host, _, port = address.rpartition(":")
    context = tls_context(config)
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as raw:
        sock = context.wrap_socket(raw, server_hostname=host) if context else raw
        with sock:
            error, apis, features = parse_response(_exchange(sock, 3), 3)
    if error not in (0, UNSUPPORTED_VERSION) or not apis:
        raise RuntimeFailure(f"broker {address} answered ApiVersions with error {error}")
    return BrokerVersions(address, apis, features)


def read_cluster(alias: str, config: Mapping[str, Any], brokers: Iterable[str]) -> list[BrokerVersions]:
    """Every broker's versions; an unreachable broker is one RuntimeFailure naming the cluster."""
    found = []
    for address in sorted(brokers):
        try:
            found.append(read_broker(address, config))
        except (OSError, ValueError, struct.error) as exc:
            raise RuntimeFailure(f"cluster {alias}: reading broker {address}'s ApiVersions failed: "
                                 f"{type(exc).__name__}: {exc}") from None
    return found


def check_flows(pairs: Iterable[tuple[str, str]], configs: Mapping[str, Mapping[str, Any]],
                brokers: Mapping[str, Iterable[str]]) -> list[Verdict]:
    """Read every flow cluster's brokers (`brokers`: alias -> host:port from its metadata) and judge each
    flow pair against the pinned MM2; raises the refusal before anything changes."""
    pairs = list(pairs)
    aliases = sorted({alias for pair in pairs for alias in pair})
    missing = [alias for alias in aliases if alias not in configs or alias not in brokers]
    if missing:
        raise RuntimeFailure(f"flow clusters without a client config or metadata: {', '.join(missing)}")
    evidence = {alias: read_cluster(alias, configs[alias], brokers[alias]) for alias in aliases}
    verdicts = flow_verdicts(pairs, evidence)
    message = refusal(verdicts)
    if message:
        raise RuntimeFailure(message)
    return verdicts


