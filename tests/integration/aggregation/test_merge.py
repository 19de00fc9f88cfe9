"""merge.py on a freshly migrated database, without Spark: rows staged in the staging area and
moved into the temp tables (unstage.load) in, what the batch did out. events_new is what the
batch recorded in aggregation.applied_events, and the mid-write
hook (the crash_mid_write fault point) runs only once an upsert ran in the transaction; each
remembered event carries its journey (Kafka position and timestamp, order, the batch); a record
staged twice (a retried Spark task) is folded once."""

import itertools
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from psycopg.types.json import Jsonb

from spark_jobs.aggregation import merge, unstage
from tests.integration.aggregation.staged import Row, stage_rows
from tests.integration.databases import create_database, drop_database

pytestmark = pytest.mark.integration
NOW = datetime.now(UTC)
KAFKA_AT = NOW + timedelta(seconds=1)
BATCHES = itertools.count()


def event_row(offset: int, event_id: uuid.UUID) -> Row:
    """A staged OrderPlaced event (the columns of staging.EVENTS; error NULL)."""
    return {
        "kafka_partition": 0,
        "kafka_offset": offset,
        "kafka_timestamp": KAFKA_AT,
        "event_id": event_id,
        "event_type": "OrderPlaced",
        "occurred_at": NOW,
        "day": NOW.date(),
        "order_id": f"o-{event_id}",
        "customer_id": "c-1",
        "currency": "EUR",
        "status": "PLACED",
        "status_rank": 0,
        "total_cents": 100,
        "items": Jsonb([{"sku": "S-1", "quantity": 1, "unit_price_cents": 100}]),
    }


def dead_row(offset: int) -> Row:
    """A staged dead letter (the columns of staging.DEAD_LETTERS; error set)."""
    return {
        "topic": "t",
        "kafka_partition": 0,
        "kafka_offset": offset,
        "key": b"k",
        "value": b"\x00",
        "error": "value is not JSON",
    }


@dataclass(frozen=True)
class Db:
    """A scratch database: the job's DSN, and a cursor of an autocommit connection with it."""

    dsn: str
    cur: merge.Cursor


@pytest.fixture
def db() -> Iterator[Db]:
    database = f"agg_merge_{uuid.uuid4().hex[:10]}"
    dsn = create_database(database).dsn("spark")
    try:
        with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor() as c:
            yield Db(dsn, c)
    finally:
        drop_database(database)


def apply(
    db: Db, rows: list[Row], batch_id: int | None = None, retried: list[Row] | None = None
) -> tuple[merge.Merged, int]:
    """Stage and merge one batch (of query "q") in its own transaction; (what it did, hook
    calls). `retried` rows are staged a second time, as a task attempt that committed and was
    then lost with its executor leaves them, which the executors' counts do not include."""
    calls: list[None] = []
    batch = next(BATCHES) if batch_id is None else batch_id
    staged = stage_rows(db.dsn, "q", batch, rows)
    if retried:
        stage_rows(db.dsn, "q", batch, retried)
    cur = db.cur
    with cur.connection.transaction():
        merge.prepare(cur)
        unstage.load(cur, "q", batch, staged)
        merged = merge.merge(
            cur,
            "t",
            query_id="q",
            batch_id=batch,
            after_first_upsert=lambda: calls.append(None),
        )
    return merged, len(calls)


def test_events_new_is_what_the_batch_recorded_in_applied_events(db: Db) -> None:
    cur = db.cur
    a, b, c = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    rows = [event_row(0, a), event_row(1, b), event_row(2, a), event_row(3, c), dead_row(4)]
    merged, _ = apply(db, rows)
    assert (merged.records, merged.valid_records, merged.events_new) == (5, 4, 3)
    assert (merged.late_events, merged.dead_letters) == (0, 1)
    cur.execute("SELECT count(*) FROM aggregation.applied_events")
    assert cur.fetchone() == (3,)


def test_the_mid_write_hook_runs_only_after_an_upsert(db: Db) -> None:
    cur = db.cur
    counted = uuid.uuid4()
    _, first = apply(db, [event_row(0, counted)])
    # Only an event counted before and a dead letter: nothing to upsert, no hook.
    merged, again = apply(db, [event_row(1, counted), dead_row(2)])
    assert (merged.events_new, merged.dead_letters) == (0, 1)
    assert (first, again) == (1, 0)
    cur.execute("SELECT orders_placed FROM analytics.customer_sales")
    assert cur.fetchall() == [(1,)]


def test_each_remembered_event_records_its_journey(db: Db) -> None:
    cur = db.cur
    a, b = uuid.uuid4(), uuid.uuid4()
    merged, _ = apply(db, [event_row(7, a), event_row(8, b), event_row(9, a)], 41)
    assert merged.newest_event_at == NOW
    cur.execute(
        "SELECT event_id, order_id, event_type, kafka_partition, kafka_offset, kafka_timestamp,"
        " query_id, batch_id FROM aggregation.applied_events ORDER BY kafka_offset"
    )
    assert cur.fetchall() == [
        (a, f"o-{a}", "OrderPlaced", 0, 7, KAFKA_AT, "q", 41),  # the first copy of a
        (b, f"o-{b}", "OrderPlaced", 0, 8, KAFKA_AT, "q", 41),
    ]


def test_a_record_staged_twice_is_folded_once(db: Db) -> None:
    cur = db.cur
    a, b = uuid.uuid4(), uuid.uuid4()
    rows = [event_row(0, a), event_row(1, b), dead_row(2)]
    merged, _ = apply(db, rows, retried=[event_row(1, b), dead_row(2)])
    assert (merged.records, merged.valid_records, merged.events_new) == (3, 2, 2)
    assert merged.dead_letters == 1
    cur.execute("SELECT orders_placed, placed_cents FROM analytics.customer_sales")
    assert cur.fetchall() == [(2, 200)]
    cur.execute("SELECT kafka_offset FROM analytics.dead_letters")
    assert cur.fetchall() == [(2,)]
    cur.execute("SELECT count(*) FROM aggregation.staged_records")
    assert cur.fetchone() == (5,)  # released by the sink, not by merge
