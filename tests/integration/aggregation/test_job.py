"""The aggregation job end to end on real Kafka, Postgres and Spark: exact under crashes,
replays, duplicates and bad records; backfill equals streaming; every table equals an
independently computed oracle.

The tests run in order and share one topic, database and checkpoint (each Spark start costs
~15 s on 2 cores); every step checks the complete state.
"""

import json
import random
from collections.abc import Sequence
from typing import Any

import pytest

from stack.waiting import wait_for
from tests.e2e.analytics import CUSTOMER_COLUMNS, DAILY_COLUMNS, PRODUCT_COLUMNS
from tests.integration.aggregation.conftest import Pipeline, create_database, drop_database
from tests.integration.aggregation.history import (
    Event,
    Record,
    expected_tables,
    interleave,
    make_history,
    produce,
)

pytestmark = pytest.mark.integration

DAILY = DAILY_COLUMNS
CUSTOMER = (*CUSTOMER_COLUMNS, "first_order_at", "last_order_at")
PRODUCT = PRODUCT_COLUMNS

# Shared across the ordered tests of this module.
produced: list[Event] = []
dead_letters_produced: list[Record] = []


def db_tables(p: Pipeline, database: str | None = None) -> dict[str, Any]:
    """The analytics tables as the analyst sees them, shaped like history.expected_tables."""

    def q(sql: str) -> list[tuple[Any, ...]]:
        return p.query(sql, database)

    fresh = q(
        "SELECT coalesce(sum(events_applied), 0), max(last_event_at) FROM analytics.freshness"
    )
    return {
        "daily_sales": {
            (r[0], r[1]): dict(zip(DAILY, r[2:], strict=True))
            for r in q(f"SELECT day, currency, {', '.join(DAILY)} FROM analytics.daily_sales")
        },
        "customer_sales": {
            r[0]: dict(zip(CUSTOMER, r[1:], strict=True))
            for r in q(f"SELECT customer_id, {', '.join(CUSTOMER)} FROM analytics.customer_sales")
        },
        "product_sales": {
            r[0]: dict(zip(PRODUCT, r[1:], strict=True))
            for r in q(f"SELECT sku, {', '.join(PRODUCT)} FROM analytics.product_sales")
        },
        "order_status_counts": dict(q("SELECT status, orders FROM analytics.order_status_counts")),
        "events": fresh[0][0],
        "last_event_at": fresh[0][1],
    }


def oracle(events: Sequence[Event]) -> dict[str, Any]:
    """expected_tables with every column present (zeros where nothing was counted)."""
    e = expected_tables(events)
    e["daily_sales"] = {k: {c: v.get(c, 0) for c in DAILY} for k, v in e["daily_sales"].items()}
    e["product_sales"] = {
        k: {c: v.get(c, 0) for c in PRODUCT} for k, v in e["product_sales"].items()
    }
    return e


def assert_exact(p: Pipeline, events: Sequence[Event], database: str | None = None) -> None:
    actual, expected = db_tables(p, database), oracle(events)
    for table in expected:
        assert actual[table] == expected[table], f"analytics.{table} differs from the oracle"


def malformed(rng: random.Random, template: Event) -> list[Record]:
    """One record of each kind of bad input (see parse.py)."""
    good = json.loads(template.record().value or b"{}")
    key = template.order["id"].encode()

    def variant(**changes: Any) -> bytes:
        return json.dumps({**good, "event_id": str(rng.getrandbits(64)), **changes}).encode()

    missing = {k: v for k, v in good.items() if k != "occurred_at"}
    return [
        Record(b"k1", b"this is not json"),
        Record(key, json.dumps(json.dumps(good)).encode()),  # a JSON string, not an object
        Record(key, variant(schema_version=2)),
        Record(key, variant(event_type="OrderRefunded")),
        Record(key, json.dumps(missing).encode()),
        Record(key, variant(order={**good["order"], "total_cents": "12"})),
        Record(key, b"{" + b" " * 300_000 + b"}"),  # oversized
        Record(key, b"\xff\xfe\x00"),
        Record(b"another-order", template.record().value),  # key does not match order.id
        Record(key, None),  # tombstone
    ]


def history(seed: int, orders: int) -> list[Event]:
    return interleave(make_history(orders, seed=seed, days=4), seed=seed)


def test_crash_after_postgres_commit_then_restart_is_exact(pipeline: Pipeline) -> None:
    events = history(1, 400)
    dupes = events[:25]  # the same events produced twice, in the same batch
    produce(pipeline.bootstrap, pipeline.topic, [e.record() for e in [*events, *dupes]])
    produced.extend(events)

    job = pipeline.start(fault="crash_after_commit")
    assert job.wait() == 137, job.output()[-3000:]
    assert pipeline.query("SELECT count(*) FROM analytics.applied_batches")[0][0] == 1
    assert_exact(pipeline, produced)  # committed in Postgres, not in Spark

    job = pipeline.start()
    try:
        # Spark re-runs batch 0 (never committed in its checkpoint); the ledger skips it.
        wait_for(lambda: "already applied: skipped" in job.output(), what="the skip", timeout=120)
        pipeline.wait_applied(len(produced), 0, job)
        assert_exact(pipeline, produced)
    finally:
        assert job.stop() == 0
    ledger = pipeline.query("SELECT duplicates, offsets FROM analytics.applied_batches")
    assert sum(r[0] for r in ledger) == len(dupes)


def test_crash_mid_write_duplicates_and_bad_records(pipeline: Pipeline) -> None:
    rng = random.Random(5)
    events = history(2, 300)
    bad = malformed(rng, events[0])
    again = produced[100:140]  # counted by an earlier batch already
    records = (
        [e.record() for e in events[:200]] + bad + [e.record() for e in [*events[200:], *again]]
    )
    produce(pipeline.bootstrap, pipeline.topic, records)
    produced.extend(events)
    dead_letters_produced.extend(bad)
    before = db_tables(pipeline)

    job = pipeline.start(fault="crash_mid_write")
    assert job.wait() == 137, job.output()[-3000:]
    assert db_tables(pipeline) == before  # the half-written transaction left nothing

    job = pipeline.start()
    try:
        pipeline.wait_applied(len(produced), len(bad), job)
        assert_exact(pipeline, produced)
    finally:
        assert job.stop() == 0
    dead = pipeline.query("SELECT key, value, error FROM analytics.dead_letters")
    assert len(dead) == len(bad)

    def raw(b: Any) -> bytes | None:
        return None if b is None else bytes(b)

    assert sorted(repr((raw(k), raw(v))) for k, v, _ in dead) == sorted(
        repr((r.key, r.value)) for r in bad
    )
    errors = {e for _, _, e in dead}
    assert {
        "value is not JSON",
        "value is not a JSON object",
        "unsupported schema_version 2",
        "unknown event_type OrderRefunded",
        "missing field occurred_at",
        "value is not UTF-8 text",
        "key does not match order.id",
        "empty value (tombstone)",
    } <= errors
    assert any(e.startswith("oversized") for e in errors)


def test_replaying_a_committed_batch_changes_nothing(pipeline: Pipeline) -> None:
    events = history(3, 150)
    produce(pipeline.bootstrap, pipeline.topic, [e.record() for e in events])
    produced.extend(events)
    job = pipeline.start()
    try:
        pipeline.wait_applied(len(produced), len(dead_letters_produced), job)
    finally:
        assert job.stop() == 0
    state = db_tables(pipeline)
    # Make Spark forget it committed its last batch: it re-runs it on restart.
    commits = sorted(
        pipeline.checkpoint.joinpath("commits").glob("[0-9]*"), key=lambda f: int(f.name)
    )
    last = commits[-1]
    last.unlink()
    pipeline.checkpoint.joinpath("commits", f".{last.name}.crc").unlink(missing_ok=True)

    job = pipeline.start()
    try:
        wait_for(
            lambda: f"batch {last.name} of query" in job.output(), what="the replay", timeout=120
        )
    finally:
        assert job.stop() == 0
    assert "already applied: skipped" in job.output()
    assert db_tables(pipeline) == state
    assert_exact(pipeline, produced)


def test_backfill_into_empty_tables_equals_streaming(pipeline: Pipeline) -> None:
    database = f"{pipeline.database}_bf"
    create_database(database)
    try:
        job = pipeline.start("--backfill", database=database)
        assert job.wait() == 0, job.output()[-3000:]
        assert "backfill" in job.output()
        streamed, backfilled = db_tables(pipeline), db_tables(pipeline, database)
        assert backfilled == streamed
        same = {
            "dead_letters": "SELECT topic, kafka_partition, kafka_offset, key, value, error"
            " FROM analytics.dead_letters ORDER BY 1, 2, 3",
            "order_state": "SELECT * FROM analytics.order_state ORDER BY order_id",
            "applied_events": "SELECT * FROM analytics.applied_events ORDER BY event_id",
        }
        for table, sql in same.items():
            assert pipeline.query(sql, database) == pipeline.query(sql), table
        # A second backfill refuses non-empty tables unless --reset.
        job = pipeline.start("--backfill", database=database)
        assert job.wait() == 2
    finally:
        drop_database(database)
