"""End-to-end freshness on the running stack (not a test): API commit -> row in analytics.*.

    .venv/bin/python -m bench.pipeline_bench --rate 200 --seconds 30

Posts orders (2 items, unique keys) through the order API at a steady rate, then finds, for
each order, the Kafka offset of its OrderPlaced event (read_committed) and the ledger row
(aggregation.applied_batches) of the micro-batch that counted it. Latency = the batch's commit
(clock_timestamp() in its transaction) - the order's created_at (now() of the API's
transaction). Both clocks are the same Postgres server's.
"""

import asyncio
import bisect
import statistics
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import orjson
import psycopg
import typer

from bench.rawhttp import Connection, bench_key
from onceflow.settings import get_settings
from stack.waiting import wait_for
from tests.e2e.kafka_reader import read_events

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


async def _connection(
    port: int,
    api_key: str,
    run: str,
    schedule: Iterator[int],
    rate: int,
    start: float,
    created: dict[str, float],
) -> None:
    """One keep-alive connection posting orders when the schedule says so."""
    conn = await Connection.open(port, api_key)
    for i in schedule:
        await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
        body = {
            "customer_id": f"fresh-{run}-{i % 50}",
            "currency": "EUR",
            "items": [
                {"sku": "SKU-F1", "quantity": 2, "unit_price_cents": 1250},
                {"sku": "SKU-F2", "quantity": 1, "unit_price_cents": 99},
            ],
        }
        status, payload = await conn.post("/orders", f"{run}-{i}", body)
        if status != 201:
            raise SystemExit(f"order {i}: {status} {payload[:200]!r}")
        order = orjson.loads(payload)
        created[order["id"]] = datetime.fromisoformat(order["created_at"]).timestamp()
    conn.close()


async def _post_at_rate(
    port: int, api_key: str, run: str, rate: int, seconds: int
) -> dict[str, float]:
    """order id -> created_at (epoch seconds), posting `rate` orders/s for `seconds`."""
    created: dict[str, float] = {}
    schedule = iter(range(rate * seconds))
    start = time.monotonic()
    await asyncio.gather(
        *(_connection(port, api_key, run, schedule, rate, start, created) for _ in range(32))
    )
    elapsed = time.monotonic() - start
    print(f"posted {len(created)} orders in {elapsed:.1f}s = {len(created) / elapsed:.0f}/s")
    return created


@dataclass(frozen=True)
class Freshness:
    """One run: orders posted, the rate the API took them at, the rate they went through the
    whole pipeline (orders / first post -> last one counted), and freshness percentiles."""

    orders: int
    achieved: float
    through: float
    p50: float
    p99: float
    max: float


def measure(*, rate: int, seconds: int) -> Freshness:
    """Post `rate` orders/s for `seconds` and measure each one's API commit -> analytics row."""
    settings = get_settings()
    run = uuid.uuid4().hex[:8]
    api_key = bench_key(settings, "pipeline-bench")
    started = time.monotonic()
    created = asyncio.run(_post_at_rate(settings.api_port, api_key, run, rate, seconds))
    achieved = len(created) / (time.monotonic() - started)
    with psycopg.connect(settings.dsn("analyst"), autocommit=True) as conn:

        def counted() -> bool:
            row = conn.execute(
                "SELECT coalesce(sum(orders_placed), 0) FROM analytics.customer_sales"
                " WHERE customer_id LIKE %s",
                (f"fresh-{run}-%",),
            ).fetchone()
            return row is not None and int(row[0]) >= len(created)

        wait_for(counted, what="every order counted", timeout=600, interval=0.2)
        through = len(created) / (time.monotonic() - started)
    with psycopg.connect(settings.dsn("spark")) as job:  # the ledger is the job's
        job.read_only = True
        ledger = job.execute(
            "SELECT p.key::int, (p.value ->> 'first')::bigint, extract(epoch FROM committed_at)"
            " FROM aggregation.applied_batches, jsonb_each(offsets) p WHERE topic = %s"
            " ORDER BY 1, 2",
            (settings.topic,),
        ).fetchall()
    events = read_events(
        settings.kafka_bootstrap,
        settings.topic,
        keys=list(created),
        expected=len(created),
        timeout=300,
    )
    spans: dict[int, tuple[list[int], list[float]]] = {}
    for part, first, committed in ledger:
        firsts, commits = spans.setdefault(part, ([], []))
        firsts.append(first)
        commits.append(float(committed))
    latencies = []
    for e in events:
        firsts, commits = spans[e.partition]
        batch = bisect.bisect_right(firsts, e.offset) - 1
        latencies.append(commits[batch] - created[e.key])
    latencies.sort()
    return Freshness(
        orders=len(latencies),
        achieved=achieved,
        through=through,
        p50=statistics.median(latencies),
        p99=latencies[int(0.99 * (len(latencies) - 1))],
        max=latencies[-1],
    )


@app.command()
def main(rate: int = 200, seconds: int = 30) -> None:
    """Freshness p50/p99 at a steady order rate."""
    f = measure(rate=rate, seconds=seconds)
    print(
        f"freshness at {rate} orders/s for {seconds}s ({f.orders} orders, {f.achieved:.0f}/s "
        f"achieved): p50 {f.p50:.2f}s p99 {f.p99:.2f}s max {f.max:.2f}s"
    )


if __name__ == "__main__":
    app()
