"""EdgeProtocol (entrypoints/edge.py) in one process with a fake transport: a connection that
sends bytes httptools skips before a request line (CR, LF) after its response is still closed."""

import asyncio
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from services.orders.entrypoints.edge import EdgeProtocol


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
    )
    await send({"type": "http.response.body", "body": b"ok"})


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.closed, self.out = False, b""

    def write(self, data: Any) -> None:
        self.out += bytes(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5555), "sockname": ("127.0.0.1", 8000)}.get(name, default)


@pytest.mark.parametrize("idle_bytes", [b"\r\n", b"\n", b"\r\n\r\n"])
def test_bytes_before_a_request_line_do_not_keep_a_connection_open(
    monkeypatch: pytest.MonkeyPatch, idle_bytes: bytes
) -> None:
    monkeypatch.setenv("ONCEFLOW_API_REQUEST_READ_TIMEOUT_S", "0.3")

    async def run() -> _Transport:
        config = Config(app=_app, http=EdgeProtocol, timeout_keep_alive=1, lifespan="off")
        config.load()
        protocol = EdgeProtocol(config, ServerState(), {}, asyncio.get_running_loop())
        transport = _Transport()
        protocol.connection_made(transport)
        protocol.data_received(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        await asyncio.sleep(0.1)
        assert b" 200 " in transport.out
        protocol.data_received(idle_bytes)
        await asyncio.sleep(1.0)
        return transport

    assert asyncio.run(run()).closed


@pytest.mark.parametrize("chunks", [1, 3, 20])
def test_a_head_padded_with_whitespace_past_the_bound_is_refused(chunks: int) -> None:
    """httptools strips the whitespace before a field's value, so on_headers_complete's count
    misses it: 200 KB of it in one read passed as a 16 KiB head."""

    async def run() -> bytes:
        config = Config(app=_app, http=EdgeProtocol, timeout_keep_alive=1, lifespan="off")
        config.load()
        protocol = EdgeProtocol(config, ServerState(), {}, asyncio.get_running_loop())
        transport = _Transport()
        protocol.connection_made(transport)
        head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad:" + b" " * 200_000 + b"a\r\n\r\n"
        step = -(-len(head) // chunks)
        for i in range(0, len(head), step):
            if transport.closed:
                break
            protocol.data_received(head[i : i + step])
        await asyncio.sleep(0.05)
        return transport.out

    assert asyncio.run(run()).startswith(b"HTTP/1.1 431 ")


def test_a_head_at_the_bound_in_one_read_or_several_is_served() -> None:
    async def run(chunks: int) -> bytes:
        config = Config(app=_app, http=EdgeProtocol, timeout_keep_alive=1, lifespan="off")
        config.load()
        protocol = EdgeProtocol(config, ServerState(), {}, asyncio.get_running_loop())
        transport = _Transport()
        protocol.connection_made(transport)
        # URL + each field's name, value and 4 = 16384: the largest head the bound allows.
        value = b"a" * (16384 - len("/healthz") - (4 + 1 + 4) - (5 + 4))
        head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + value + b"\r\n\r\n"
        step = -(-len(head) // chunks)
        for i in range(0, len(head), step):
            protocol.data_received(head[i : i + step])
        await asyncio.sleep(0.05)
        return transport.out

    for chunks in (1, 2, 3, 7):
        assert asyncio.run(run(chunks)).startswith(b"HTTP/1.1 200 "), chunks
