"""Refunds (contract 5: cancellations of orders that had been paid) folded by merge.py without
Spark, in whatever order an order's events arrive: in one batch, or spread over batches with the
cancellation before the payment, each event once or again as a duplicate. Every money table is
compared with the oracle (per currency, with refunds and net paid) after every batch split."""

import itertools
import random
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from onceflow.schema import analytics
from spark_jobs.aggregation import merge, unstage
from tests.integration.aggregation.history import RANK, STATUS, Event, iso
from tests.integration.aggregation.staged import Row, stage_rows
from tests.integration.aggregation.tables import assert_exact
from tests.integration.databases import create_database, drop_database

pytestmark = pytest.mark.integration
START = datetime(2026, 11, 20, 22, 30, tzinfo=UTC)
BATCHES = itertools.count()
LIVES = (
    (),
    ("OrderPaid",),
    ("OrderPaid", "OrderShipped"),
    ("OrderCancelled",),
    ("OrderPaid", "OrderCancelled"),
)


def orders(n: int, seed: int) -> list[Event]:
    """`n` orders in JPY, USD and EUR, each with one of LIVES; changes 0 to 25 hours apart, so a
    cancellation may fall on a later day than the payment."""
    rng = random.Random(seed)
    events = []
    for i in range(n):
        at = START + timedelta(minutes=rng.randint(0, 120))
        items = [{"sku": f"S-{rng.randint(1, 3)}", "quantity": 2, "unit_price_cents": 500 + i}]
        order = {
            "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "customer_id": f"c-{i % 3}",
            "currency": ("JPY", "USD", "EUR")[i % 3],
            "status": "PLACED",
            "total_cents": 2 * (500 + i),
            "created_at": iso(at),
            "updated_at": iso(at),
            "items": items,
        }
        for event_type in ("OrderPlaced", *LIVES[i % len(LIVES)]):
            if event_type != "OrderPlaced":
                at += timedelta(hours=rng.choice((0, 1, 25)))
            changed = {**order, "status": STATUS[event_type], "updated_at": iso(at)}
            events.append(Event(str(uuid.uuid4()), event_type, at, changed))
    return events


def staged(event: Event, offset: int) -> Row:
    """The staged row of `event` (the columns of staging.EVENTS)."""
    o = event.order
    return {
        "kafka_partition": 0,
        "kafka_offset": offset,
        "event_id": uuid.UUID(event.event_id),
        "event_type": event.event_type,
        "occurred_at": event.occurred_at,
        "day": event.occurred_at.astimezone(UTC).date(),
        "order_id": o["id"],
        "customer_id": o["customer_id"],
        "currency": o["currency"],
        "status": o["status"],
        "status_rank": RANK[o["status"]],
        "total_cents": o["total_cents"],
        "items": Jsonb(o["items"])
        if event.event_type in ("OrderPlaced", "OrderCancelled")
        else None,
        "fingerprint": hash(event.event_id) & 0x7FFFFFFF,
    }


class Scratch:
    """A migrated scratch database: the job's DSN and the owner's, readable as tables.Queried."""

    def __init__(self, database: str) -> None:
        settings = create_database(database)
        self.dsn, self.owner = settings.dsn("spark"), settings.dsn("owner")
        self.offsets = itertools.count()

    def query(self, sql: str, database: str | None = None) -> list[tuple[Any, ...]]:
        assert database is None
        with psycopg.connect(self.owner) as conn:
            return conn.execute(sql).fetchall()

    def empty(self) -> None:
        names = ", ".join(t.fullname for t in analytics.JOB_TABLES)
        with psycopg.connect(self.owner) as conn:
            conn.execute(f"TRUNCATE {names}")

    def fold(self, events: Sequence[Event]) -> None:
        """Stage and fold `events` as one batch, in their order on the topic."""
        batch = next(BATCHES)
        counts = stage_rows(self.dsn, "q", batch, [staged(e, next(self.offsets)) for e in events])
        with psycopg.connect(self.dsn) as conn, conn.cursor() as cur:
            cur.execute("SELECT aggregation.lock_writers()")
            merge.prepare(cur)
            unstage.load(cur, "q", batch, counts)
            merge.merge(cur, "t", query_id="q", batch_id=batch)
            unstage.release(cur, "q", batch)


@pytest.fixture(scope="module")
def scratch() -> Iterator[Scratch]:
    database = f"agg_refunds_{uuid.uuid4().hex[:10]}"
    try:
        yield Scratch(database)
    finally:
        drop_database(database)


EVENTS = orders(15, seed=23)
BY_TYPE = {t: [e for e in EVENTS if e.event_type == t] for t in STATUS}


def splits() -> dict[str, list[list[Event]]]:
    """Ways the same events reach the job, as batches in topic order."""
    shuffled = random.Random(5).sample(EVENTS, len(EVENTS))
    return {
        "one batch, reversed": [list(reversed(EVENTS))],
        "one batch, shuffled": [shuffled],
        "cancellations, then payments": [
            BY_TYPE["OrderCancelled"],
            BY_TYPE["OrderPlaced"] + BY_TYPE["OrderShipped"],
            BY_TYPE["OrderPaid"],
        ],
        "payments, then cancellations": [
            BY_TYPE["OrderPaid"] + BY_TYPE["OrderPlaced"],
            BY_TYPE["OrderCancelled"] + BY_TYPE["OrderShipped"],
        ],
        "one event a batch, reversed": [[e] for e in reversed(EVENTS)],
        "every event again, later": [shuffled[:20], shuffled[10:], EVENTS],
    }


@pytest.mark.parametrize("split", list(splits()))
def test_every_money_table_equals_the_oracle_whatever_the_order(
    scratch: Scratch, split: str
) -> None:
    scratch.empty()
    seen: list[Event] = []
    batches = splits()[split]
    for batch in batches:
        scratch.fold(batch)
        seen += batch
        if len(batches) <= 3:  # each step of the splits in a few batches, the others at the end
            assert_exact(scratch, seen)
    assert_exact(scratch, seen)
    paid = {e.order["id"] for e in BY_TYPE["OrderPaid"]}
    refunds = [e for e in BY_TYPE["OrderCancelled"] if e.order["id"] in paid]
    expected = {
        c: sum(e.order["total_cents"] for e in refunds if e.order["currency"] == c)
        for c in ("JPY", "USD", "EUR")
    }
    rows = scratch.query(
        "SELECT currency, sum(refunded_cents) FROM analytics.daily_sales GROUP BY currency"
    )
    assert dict(rows) == expected
    assert all(expected.values()), "the history has refunds in every currency"
