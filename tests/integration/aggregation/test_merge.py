"""merge.py on a freshly migrated database, without Spark: staged COPY text in, what the batch
did out. events_new is what the batch recorded in analytics.applied_events, and the mid-write
hook (the crash_mid_write fault point) runs only once an upsert ran in the transaction; each
remembered event carries its journey (Kafka position and timestamp, order, the batch)."""

import itertools
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from spark_jobs.aggregation import merge, staging
from tests.integration.databases import create_database, drop_database

pytestmark = pytest.mark.integration
NOW = datetime.now(UTC)
KAFKA_AT = NOW + timedelta(seconds=1)
BATCHES = itertools.count()


def event_line(offset: int, event_id: uuid.UUID) -> str:
    """A t_events COPY line of an OrderPlaced event, in staging.EVENTS' column order."""
    row: dict[str, Any] = {
        "kafka_partition": 0,
        "kafka_offset": offset,
        "kafka_timestamp": KAFKA_AT.isoformat(),
        "event_id": event_id,
        "event_type": "OrderPlaced",
        "occurred_at": NOW.isoformat(),
        "day": NOW.date(),
        "order_id": f"o-{event_id}",
        "customer_id": "c-1",
        "currency": "EUR",
        "status": "PLACED",
        "status_rank": 0,
        "total_cents": 100,
        "items": '[{"sku": "S-1", "quantity": 1, "unit_price_cents": 100}]',
    }
    return "\t".join(str(row[name]) for name in staging.EVENTS.names)


def dead_line(offset: int) -> str:
    return f"t\t0\t{offset}\t\\\\x6b\t\\\\x00\tvalue is not JSON"


@pytest.fixture
def cur() -> Iterator[merge.Cursor]:
    database = f"agg_merge_{uuid.uuid4().hex[:10]}"
    settings = create_database(database)
    try:
        with psycopg.connect(settings.dsn("spark"), autocommit=True) as conn, conn.cursor() as c:
            yield c
    finally:
        drop_database(database)


def apply(
    cur: merge.Cursor, events: list[str], dead: list[str], batch_id: int | None = None
) -> tuple[merge.Merged, int]:
    """Stage and merge one batch (of query "q") in its own transaction; (what it did, hook
    calls)."""
    calls: list[None] = []
    payloads = {
        table.name: "".join(f"{line}\n" for line in lines)
        for table, lines in ((staging.EVENTS, events), (staging.DEAD_LETTERS, dead))
        if lines
    }
    with cur.connection.transaction():
        merge.stage(cur, payloads)
        merged = merge.merge(
            cur,
            "t",
            query_id="q",
            batch_id=next(BATCHES) if batch_id is None else batch_id,
            after_first_upsert=lambda: calls.append(None),
        )
    return merged, len(calls)


def test_events_new_is_what_the_batch_recorded_in_applied_events(cur: merge.Cursor) -> None:
    a, b, c = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    lines = [event_line(0, a), event_line(1, b), event_line(2, a), event_line(3, c)]
    merged, _ = apply(cur, lines, [dead_line(4)])
    assert (merged.records, merged.valid_records, merged.events_new) == (5, 4, 3)
    assert (merged.late_events, merged.dead_letters) == (0, 1)
    cur.execute("SELECT count(*) FROM analytics.applied_events")
    assert cur.fetchone() == (3,)


def test_the_mid_write_hook_runs_only_after_an_upsert(cur: merge.Cursor) -> None:
    counted = uuid.uuid4()
    _, first = apply(cur, [event_line(0, counted)], [])
    # Only an event counted before and a dead letter: nothing to upsert, no hook.
    merged, again = apply(cur, [event_line(1, counted)], [dead_line(2)])
    assert (merged.events_new, merged.dead_letters) == (0, 1)
    assert (first, again) == (1, 0)
    cur.execute("SELECT orders_placed FROM analytics.customer_sales")
    assert cur.fetchall() == [(1,)]


def test_each_remembered_event_records_its_journey(cur: merge.Cursor) -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    merged, _ = apply(cur, [event_line(7, a), event_line(8, b), event_line(9, a)], [], 41)
    assert merged.newest_event_at == NOW
    cur.execute(
        "SELECT event_id, order_id, event_type, kafka_partition, kafka_offset, kafka_timestamp,"
        " query_id, batch_id FROM analytics.applied_events ORDER BY kafka_offset"
    )
    assert cur.fetchall() == [
        (a, f"o-{a}", "OrderPlaced", 0, 7, KAFKA_AT, "q", 41),  # the first copy of a
        (b, f"o-{b}", "OrderPlaced", 0, 8, KAFKA_AT, "q", 41),
    ]
