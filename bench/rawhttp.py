"""A lean keep-alive HTTP/1.1 client for load generators: httpx's own per-request cost would
cap the offered rate well below the API's."""

import asyncio
import re
import uuid

import orjson

from onceflow.client_keys import create_client
from onceflow.contract import Scope
from onceflow.settings import Settings

LENGTH = re.compile(rb"content-length: (\d+)", re.IGNORECASE)


class Connection:
    """One keep-alive connection to the API; requests on it go one at a time."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int, api_key: str
    ):
        self.reader, self.writer, self.port, self.api_key = reader, writer, port, api_key

    @classmethod
    async def open(cls, port: int, api_key: str) -> "Connection":
        """Connect to the API on 127.0.0.1:port; every request carries `api_key`."""
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer, port, api_key)

    async def post(self, path: str, key: str, body: object = None) -> tuple[int, bytes]:
        """POST `body` (JSON, or nothing) with an Idempotency-Key; (status, response body)."""
        raw = b"" if body is None else orjson.dumps(body)
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            f"Authorization: Bearer {self.api_key}\r\n"
            f"Content-Type: application/json\r\nIdempotency-Key: {key}\r\n"
            f"Content-Length: {len(raw)}\r\n\r\n"
        )
        self.writer.write(head.encode() + raw)
        response = await self.reader.readuntil(b"\r\n\r\n")
        length = LENGTH.search(response)
        payload = await self.reader.readexactly(int(length[1]) if length else 0)
        return int(response[9:12]), payload

    def close(self) -> None:
        """Close the connection."""
        self.writer.close()


def bench_key(settings: Settings, name: str) -> str:
    """A key of a new client `name-<random>` in settings' database: benchmarks never use
    local-dev. The rate is far above any load a benchmark offers."""
    issued = create_client(
        settings=settings,
        name=f"{name}-{uuid.uuid4().hex[:8]}",
        scopes=tuple(Scope),
        rate_per_s=1_000_000,
    )
    return issued.key
