"""EdgeProtocol (entrypoints/edge.py) in one process with a fake transport: a connection that
sends bytes httptools skips before a request line (CR, LF) after its response is still closed."""

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from onceflow.settings import get_api_settings
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


@pytest.fixture(autouse=True)
def fresh_api_settings() -> Iterator[None]:
    """The API settings read afresh for each test (an earlier test in the same process may have
    cached others), and not left cached for later tests."""
    get_api_settings.cache_clear()
    yield
    get_api_settings.cache_clear()


async def _connected() -> tuple[EdgeProtocol, _Transport]:
    config = Config(app=_app, http=EdgeProtocol, timeout_keep_alive=1, lifespan="off")
    config.load()
    protocol = EdgeProtocol(config, ServerState(), {}, asyncio.get_running_loop())
    transport = _Transport()
    protocol.connection_made(transport)
    return protocol, transport


async def _until(done: Callable[[], bool], timeout: float = 5.0) -> None:
    """Let the loop run (the app's tasks, the protocol's timers) until `done`, or fail."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not done():
        assert asyncio.get_running_loop().time() < deadline, "not within the timeout"
        await asyncio.sleep(0.01)


async def _send(protocol: EdgeProtocol, transport: _Transport, data: bytes, chunks: int) -> None:
    step = -(-len(data) // chunks)
    for i in range(0, len(data), step):
        if transport.closed:
            break
        protocol.data_received(data[i : i + step])


@pytest.mark.parametrize("idle_bytes", [b"\r\n", b"\n", b"\r\n\r\n"])
def test_bytes_before_a_request_line_do_not_keep_a_connection_open(
    monkeypatch: pytest.MonkeyPatch, idle_bytes: bytes
) -> None:
    monkeypatch.setenv("ONCEFLOW_API_REQUEST_READ_TIMEOUT_S", "0.3")

    async def run() -> None:
        protocol, transport = await _connected()
        protocol.data_received(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        await _until(lambda: b" 200 " in transport.out)
        protocol.data_received(idle_bytes)
        await _until(lambda: transport.closed)

    asyncio.run(run())


@pytest.mark.parametrize("chunks", [1, 3, 20])
def test_a_head_padded_with_whitespace_past_the_bound_is_refused(chunks: int) -> None:
    """httptools strips the whitespace before a field's value, so on_headers_complete's count
    misses it: 200 KB of it in one read passed as a 16 KiB head."""

    async def run() -> None:
        protocol, transport = await _connected()
        head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad:" + b" " * 200_000 + b"a\r\n\r\n"
        await _send(protocol, transport, head, chunks)
        await _until(lambda: bool(transport.out))
        assert transport.out.startswith(b"HTTP/1.1 431 ")

    asyncio.run(run())


@pytest.mark.parametrize("chunks", [1, 2, 3, 7])
def test_a_head_at_the_bound_in_one_read_or_several_is_served(chunks: int) -> None:
    async def run() -> None:
        protocol, transport = await _connected()
        # URL + each field's name, value and 4 = 16384: the largest head the bound allows.
        value = b"a" * (16384 - len("/healthz") - (4 + 1 + 4) - (5 + 4))
        head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + value + b"\r\n\r\n"
        await _send(protocol, transport, head, chunks)
        await _until(lambda: bool(transport.out))
        assert transport.out.startswith(b"HTTP/1.1 200 ")

    asyncio.run(run())
