"""A broker's finalized feature levels (KIP-584), from its ApiVersions answer: the Python client
has no describe_features, and the stack's Kafka jars have no kafka-features tool."""

import socket
import struct
from dataclasses import dataclass

_API_VERSIONS, _VERSION = 18, 3  # v3: flexible, answers with the feature tags
_FINALIZED = 2  # the tag of FinalizedFeatures in ApiVersionsResponse v3+


@dataclass
class _Reader:
    data: bytes
    at: int = 0

    def take(self, size: int) -> bytes:
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk

    def int16(self) -> int:
        return int(struct.unpack(">h", self.take(2))[0])

    def uvarint(self) -> int:
        value = shift = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    def compact_string(self) -> str:
        return self.take(self.uvarint() - 1).decode()

    def skip_tags(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())


def finalized_features(host: str, port: int, timeout: float = 10) -> dict[str, int]:
    """Each finalized feature's (max) version level, as broker `host:port` reports it."""
    client = b"onceflow-test"
    header = struct.pack(">hhih", _API_VERSIONS, _VERSION, 1, len(client)) + client + b"\0"
    name, version = b"onceflow", b"1"
    body = bytes([len(name) + 1]) + name + bytes([len(version) + 1]) + version + b"\0"
    request = header + body
    with socket.create_connection((host, port), timeout=timeout) as conn:
        conn.sendall(struct.pack(">i", len(request)) + request)
        size = struct.unpack(">i", _receive(conn, 4))[0]
        answer = _Reader(_receive(conn, size))
    answer.take(4)  # correlation id (response header v0)
    error = answer.int16()
    assert error == 0, f"ApiVersions answered error {error}"
    for _ in range(answer.uvarint() - 1):  # api keys: key, min, max, tags
        answer.take(6)
        answer.skip_tags()
    answer.take(4)  # throttle time
    for _ in range(answer.uvarint()):
        tag, size = answer.uvarint(), answer.uvarint()
        field = _Reader(answer.take(size))
        if tag == _FINALIZED:
            return _levels(field)
    return {}


def _levels(field: _Reader) -> dict[str, int]:
    levels = {}
    for _ in range(field.uvarint() - 1):  # name, max level, min level, tags
        name, level = field.compact_string(), field.int16()
        field.int16()
        field.skip_tags()
        levels[name] = level
    return levels


def _receive(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        assert chunk, "the broker closed the connection"
        data += chunk
    return data
