"""What the API edge's HTTP protocol adds per request, without the network or a busy machine's
scheduling: uvicorn's HttpToolsProtocol and services/orders/entrypoints/edge.py's EdgeProtocol
each parse the same keep-alive POST /orders (the benchmark's headers and a 150-byte body) and
run a trivial ASGI app, in one process, measured in CPU time.

    .venv/bin/python -m bench.edge_protocol_bench [--requests 20000] [--repeats 5]
"""

import argparse
import asyncio
import statistics
import time
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from services.orders.entrypoints.edge import EdgeProtocol

REQUEST = (
    b"POST /orders HTTP/1.1\r\nHost: 127.0.0.1:8011\r\nContent-Type: application/json\r\n"
    b"Idempotency-Key: bench-1-1-1\r\nAuthorization: Bearer of_live_" + b"a" * 43 + b"\r\n"
    b"Content-Length: 150\r\n\r\n" + b"x" * 150
)


async def app(_scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await send(
        {"type": "http.response.start", "status": 201, "headers": [(b"content-length", b"2")]}
    )
    await send({"type": "http.response.body", "body": b"{}"})


class Transport:
    """Enough of an asyncio transport for the protocol: writes go nowhere."""

    def __init__(self) -> None:
        self.closing = False

    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 5) if name in ("peername", "sockname") else default

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def cpu_us_per_request(protocol: type[HttpToolsProtocol], requests: int) -> float:
    config = Config(app=app, lifespan="off", log_config=None, access_log=False)
    config.load()
    handler = protocol(config, ServerState(), {})
    handler.connection_made(Transport())  # type: ignore[arg-type]
    started = time.process_time()
    for _ in range(requests):
        handler.data_received(REQUEST)
        await asyncio.sleep(0)  # the request's task runs
        await asyncio.sleep(0)
    return (time.process_time() - started) / requests * 1e6


async def main(requests: int, repeats: int) -> None:
    plain, edge = [], []
    for _ in range(repeats):  # interleaved
        plain.append(await cpu_us_per_request(HttpToolsProtocol, requests))
        edge.append(await cpu_us_per_request(EdgeProtocol, requests))
    a, b = statistics.median(plain), statistics.median(edge)
    print(f"HttpToolsProtocol {a:.1f} µs CPU/request, EdgeProtocol {b:.1f} (+{b - a:.1f} µs)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.repeats))
