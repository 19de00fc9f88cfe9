"""Steady order traffic for the soak benchmark: creates at a fixed rate, plus transitions."""

import asyncio
import itertools
import time
from collections import Counter
from collections.abc import Iterator, Mapping

import orjson

from bench.rawhttp import Connection

ITEMS = [
    {"sku": "SKU-S1", "quantity": 2, "unit_price_cents": 1250},
    {"sku": "SKU-S2", "quantity": 1, "unit_price_cents": 99},
]


def actions(i: int) -> list[str]:
    """The transitions order i gets: 6 in 10 are paid (3 of those shipped), 1 in 10 cancelled."""
    if i % 10 < 3:
        return ["pay", "ship"]
    if i % 10 < 6:
        return ["pay"]
    return ["cancel"] if i % 10 == 9 else []


async def _connection(
    port: int,
    api_key: str,
    run: str,
    schedule: Iterator[int],
    rate: int,
    start: float,
    deadline: float,
    outcomes: Counter[str],
) -> None:
    conn = await Connection.open(port, api_key)
    try:
        for i in schedule:
            await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
            if time.monotonic() >= deadline:
                return
            body = {"customer_id": f"soak-{i % 5000}", "currency": "EUR", "items": ITEMS}
            status, payload = await conn.post("/orders", f"{run}-{i}", body)
            outcomes[f"place {status}"] += 1
            if status != 201:
                continue
            order_id = orjson.loads(payload)["id"]
            for action in actions(i):
                status, _ = await conn.post(f"/orders/{order_id}/{action}", f"{run}-{i}-{action}")
                outcomes[f"{action} {status}"] += 1
    finally:
        conn.close()


async def drive(
    *, port: int, api_key: str, run: str, rate: int, seconds: float, connections: int = 96
) -> Counter[str]:
    """Offer `rate` orders/s (and their transitions) for `seconds` over `connections`
    connections; outcome -> count. A machine that cannot keep up places fewer orders in the
    same time: the run never stretches, and the report gives the rate achieved."""
    outcomes: Counter[str] = Counter()
    schedule = itertools.count()
    start = time.monotonic()
    deadline = start + seconds
    await asyncio.gather(
        *(
            _connection(port, api_key, run, schedule, rate, start, deadline, outcomes)
            for _ in range(connections)
        )
    )
    return outcomes


def failures(outcomes: Mapping[str, int]) -> int:
    """Requests that did not get their expected answer: 201 for a place, 200 for a transition."""
    failed = 0
    for outcome, n in outcomes.items():
        request, status = outcome.split()
        failed += n if int(status) != (201 if request == "place" else 200) else 0
    return failed
