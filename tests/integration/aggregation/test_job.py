"""The aggregation job end to end on real Kafka, Postgres and Spark: exact under crashes,
replays, duplicates and bad records; backfill equals streaming; every table equals an
independently computed oracle.

Each test has its own topic, database and checkpoint (the `pipeline` fixture) and checks the
complete state against the oracle of the events it produced itself.
"""

import json
import random
from collections.abc import Sequence
from typing import Any

import pytest

from stack.waiting import wait_for
from tests.integration.aggregation.conftest import Pipeline
from tests.integration.aggregation.history import (
    Event,
    Record,
    interleave,
    make_history,
    produce,
)
from tests.integration.aggregation.tables import assert_exact, db_tables
from tests.integration.databases import create_database, drop_database

pytestmark = pytest.mark.integration


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


def stream(pipeline: Pipeline, events: Sequence[Event], dead: int = 0) -> None:
    """Run the streaming job until `events` (and `dead` dead letters) are applied, then stop."""
    job = pipeline.start()
    try:
        pipeline.wait_applied(len(events), dead, job)
    finally:
        assert job.stop() == 0


def test_crash_after_postgres_commit_then_restart_is_exact(pipeline: Pipeline) -> None:
    events = history(1, 400)
    dupes = events[:25]  # the same events produced twice, in the same batch
    produce(pipeline.bootstrap, pipeline.topic, [e.record() for e in [*events, *dupes]])

    job = pipeline.start(fault="crash_after_commit")
    assert job.wait() == 137, job.output()[-3000:]
    assert pipeline.query("SELECT count(*) FROM aggregation.applied_batches")[0][0] == 1
    assert_exact(pipeline, events)  # committed in Postgres, not in Spark

    job = pipeline.start()
    try:
        # Spark re-runs batch 0 (never committed in its checkpoint); the ledger skips it.
        wait_for(lambda: "already applied: skipped" in job.output(), what="the skip", timeout=120)
        pipeline.wait_applied(len(events), 0, job)
        assert_exact(pipeline, events)
    finally:
        assert job.stop() == 0
    ledger = pipeline.query("SELECT duplicates, offsets FROM aggregation.applied_batches")
    assert sum(r[0] for r in ledger) == len(dupes)


def test_crash_mid_write_leaves_nothing_and_the_rerun_counts_each_event_once(
    pipeline: Pipeline,
) -> None:
    rng = random.Random(5)
    earlier = history(4, 80)
    produce(pipeline.bootstrap, pipeline.topic, [e.record() for e in earlier])
    stream(pipeline, earlier)
    events = history(2, 300)
    bad = malformed(rng, events[0])
    again = earlier[20:60]  # counted by an earlier batch already
    records = (
        [e.record() for e in events[:200]] + bad + [e.record() for e in [*events[200:], *again]]
    )
    produce(pipeline.bootstrap, pipeline.topic, records)
    produced = [*earlier, *events]
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
    ledger = pipeline.query(
        "SELECT sum(events_new), sum(duplicates) FROM aggregation.applied_batches"
    )
    assert ledger == [(len(produced), len(again))]
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
    stream(pipeline, events)
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
    assert_exact(pipeline, events)


def test_backfill_into_empty_tables_equals_streaming(pipeline: Pipeline) -> None:
    events = history(6, 200)
    bad = malformed(random.Random(6), events[0])
    records = [e.record() for e in events[:100]] + bad + [e.record() for e in events[50:]]
    produce(pipeline.bootstrap, pipeline.topic, records)
    stream(pipeline, events, len(bad))
    assert_exact(pipeline, events)
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
            "order_state": "SELECT * FROM aggregation.order_state ORDER BY order_id",
            # Every column but the batch that applied the event (query_id, batch_id).
            "applied_events": "SELECT event_id, occurred_at, order_id, event_type,"
            " kafka_partition, kafka_offset, kafka_timestamp FROM aggregation.applied_events"
            " ORDER BY event_id",
        }
        for table, sql in same.items():
            assert pipeline.query(sql, database) == pipeline.query(sql), table
        # A second backfill refuses non-empty tables unless --reset.
        job = pipeline.start("--backfill", database=database)
        assert job.wait() == 2
    finally:
        drop_database(database)
