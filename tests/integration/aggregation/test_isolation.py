"""No record the database refuses stops the aggregation job (contract §4c): a value the checks let
through but a test-only constraint of a scratch database refuses, on the staging area (the
executors' JDBC write) or on an analytics table (the fold), becomes a dead letter with the
database's message, and the rest of its batch is applied exactly once, with its ledger row. A
crash while the record is isolated leaves every event counted exactly once after the restart.
Which failures count as the data's fault: tests/unit/aggregation/test_sqlstates.py."""

import random
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from onceflow.settings import Settings, get_settings
from spark_jobs.aggregation import isolate, sqlstates
from tests.integration.aggregation.conftest import Pipeline
from tests.integration.aggregation.history import (
    Event,
    interleave,
    make_history,
    order_events,
    produce,
)
from tests.integration.aggregation.tables import assert_exact
from tests.integration.aggregation.test_sink import BAD, EVENTS, Scratch, raw, scratch
from tests.spark.session import spark

__all__ = ["scratch", "spark"]
pytestmark = pytest.mark.integration

POISON = "c-poison"
CONSTRAINT = "test_only_refuses_poison"
# Where the database refuses the record: the fold's upsert, or the executors' staging INSERT.
PLACES = {"fold": "analytics.customer_sales", "staging": "aggregation.staged_records"}
# Who writes there, and through which relation: the job's role folds; the executors'
# staging-only role inserts through the view over the staging area (staging_inbox.sql).
WRITERS = {
    "fold": ("analytics.customer_sales", "onceflow_spark"),
    "staging": ("aggregation.staging_inbox", "onceflow_spark_stage"),
}
ISOLATING = {"fold": "folding it piece by piece", "staging": "staging the batch from the driver"}


def refuse_poison(settings: Settings, table: str) -> None:
    """TEST ONLY: `table` of the scratch database refuses every row of customer POISON."""
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as conn:
        conn.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {CONSTRAINT}"
            f" CHECK (customer_id IS DISTINCT FROM '{POISON}')"
        )


def privilege(settings: Settings, change: str, place: str) -> None:
    """TEST ONLY: GRANT or REVOKE the INSERT of the writer at `place` (refused: SQLSTATE 42501)."""
    relation, role = WRITERS[place]
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as conn:
        direction = "TO" if change == "GRANT" else "FROM"
        conn.execute(f"{change} INSERT ON {relation} {direction} {role}")


def poisoned(seed: int) -> Event:
    """A valid OrderPlaced of customer POISON (its ids drawn apart from make_history's)."""
    rng = random.Random(f"poison-{seed}")
    placed_at = datetime(2026, 11, 21, 12, tzinfo=UTC)
    skus = [f"SKU-poison-{i}" for i in range(3)]
    return order_events(rng, placed_at, [POISON], skus)[0]


def b(data: Any) -> bytes | None:
    return None if data is None else bytes(data)


def assert_dead_letter(row: Sequence[Any], poison: Event) -> None:
    """The refused record, raw, with the database's message."""
    key, value, error = row
    record = poison.record()
    assert (b(key), b(value)) == (record.key, record.value)
    assert "refused by the database (SQLSTATE 23514)" in error, error
    assert f'violates check constraint "{CONSTRAINT}"' in error, error


def test_pieces_are_bisected_down_to_the_items_the_database_refuses() -> None:
    refused = {3, 10, 17, 24, 31, 38, 45}
    with psycopg.connect(get_settings().dsn("spark")) as conn, conn.transaction():
        conn.execute("CREATE TEMP TABLE items (n integer CHECK (n % 7 <> 3)) ON COMMIT DROP")

        def insert(start: int, stop: int) -> int:
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO items VALUES (%s)", [(n,) for n in range(start, stop)])
            return stop - start

        applied, refusals = isolate.pieces(conn, 50, insert)
        assert [r.index for r in refusals] == sorted(refused)
        assert all("SQLSTATE 23514" in r.reason and "items_n_check" in r.reason for r in refusals)
        rows = [n for (n,) in conn.execute("SELECT n FROM items ORDER BY n").fetchall()]
        assert rows == [n for n in range(50) if n not in refused]  # each applied once
        assert sum(applied) == len(rows)
        # Not the data's fault: raised as it is, nothing isolated.
        with pytest.raises(psycopg.errors.UndefinedTable):
            isolate.pieces(conn, 4, lambda start, stop: conn.execute("SELECT * FROM no_such"))


@pytest.mark.parametrize("place", PLACES)
def test_the_sink_dead_letters_what_the_database_refuses_and_folds_the_rest_once(
    spark: SparkSession, scratch: Scratch, place: str
) -> None:
    poison = poisoned(41)
    at = len(EVENTS) // 2
    refuse_poison(scratch.settings, PLACES[place])
    df = raw(spark, [*EVENTS[:at], poison, *EVENTS[at:]], 3)

    result = scratch.sink.apply(df, 0)

    assert (result.events_new, result.dead_letters) == (len(EVENTS), len(BAD) + 1)
    assert result.records == len(EVENTS) + 1 + len(BAD)
    assert_exact(scratch, EVENTS)
    dead = scratch.query(
        "SELECT key, value, error FROM analytics.dead_letters"
        " WHERE topic = 't' AND kafka_partition = %(p)s AND kafka_offset = %(o)s",
        params={"p": at % 3, "o": at},
    )
    assert len(dead) == 1
    assert_dead_letter(dead[0], poison)
    assert scratch.count("analytics.dead_letters") == len(BAD) + 1
    ledger = scratch.query(
        "SELECT batch_id, records, events_new, dead_letters FROM aggregation.applied_batches"
    )
    assert ledger == [(0, result.records, len(EVENTS), len(BAD) + 1)]
    assert scratch.count("aggregation.staged_records") == 0
    # Spark re-running the batch after the commit: the ledger skips it.
    assert scratch.sink.apply(df, 0).skipped
    assert_exact(scratch, EVENTS)
    assert scratch.count("analytics.dead_letters") == len(BAD) + 1


@pytest.mark.parametrize("place", PLACES)
def test_a_failure_that_is_not_the_data_s_keeps_the_retry_path(
    spark: SparkSession, scratch: Scratch, place: str
) -> None:
    df = raw(spark, EVENTS, 3)
    privilege(scratch.settings, "REVOKE", place)
    with pytest.raises((psycopg.Error, Py4JJavaError)) as failed:
        scratch.sink.apply(df, 0)
    assert "42501" in sqlstates.states_of(failed.value)
    assert not sqlstates.is_data_error(failed.value)
    # Nothing isolated, nothing applied: the batch fails as a whole, for Spark to re-run.
    for table in (
        "aggregation.applied_batches",
        "aggregation.applied_events",
        "analytics.dead_letters",
    ):
        assert scratch.count(table) == 0, table

    privilege(scratch.settings, "GRANT", place)
    result = scratch.sink.apply(df, 0)  # Spark re-runs the failed batch
    assert (result.events_new, result.dead_letters) == (len(EVENTS), len(BAD))
    assert_exact(scratch, EVENTS)


def produce_around(pipeline: Pipeline, seed: int) -> tuple[list[Event], Event]:
    """Valid events with one POISON event among them, produced before the job starts (one
    batch); (the valid events, the poison)."""
    events = interleave(make_history(150, seed=seed, days=2), seed=seed)
    poison = poisoned(seed)
    at = len(events) // 3
    produce(pipeline.bootstrap, pipeline.topic, [e.record() for e in [*events[:at], poison]])
    produce(pipeline.bootstrap, pipeline.topic, [e.record() for e in events[at:]])
    return events, poison


def assert_isolated(pipeline: Pipeline, events: Sequence[Event], poison: Event) -> None:
    """Every valid event counted once, the poison dead-lettered once, the ledger consistent."""
    assert_exact(pipeline, events)
    dead = pipeline.query("SELECT key, value, error FROM analytics.dead_letters")
    assert len(dead) == 1
    assert_dead_letter(dead[0], poison)
    ledger = pipeline.query(
        "SELECT count(*), sum(records), sum(events_new), sum(duplicates), sum(dead_letters)"
        " FROM aggregation.applied_batches"
    )
    batches, *totals = ledger[0]
    assert totals == [len(events) + 1, len(events), 0, 1]
    # The rest of the poison's batch was applied with it, in its transaction.
    refused_in = pipeline.query(
        "SELECT events_new FROM aggregation.applied_batches WHERE dead_letters > 0"
    )
    assert len(refused_in) == 1
    assert refused_in[0][0] > 0
    assert batches >= 1


@pytest.mark.parametrize("place", PLACES)
def test_the_job_isolates_a_record_the_database_refuses_without_restarting(
    pipeline: Pipeline, place: str
) -> None:
    refuse_poison(pipeline.settings, PLACES[place])
    events, poison = produce_around(pipeline, 43)

    job = pipeline.start()
    try:
        pipeline.wait_applied(len(events), 1, job)  # fails if the job exits
        assert_isolated(pipeline, events, poison)
    finally:
        assert job.stop() == 0
    assert ISOLATING[place] in job.output()
    assert job.output().count(" started: topic ") == 1


@pytest.mark.parametrize("place", PLACES)
def test_a_crash_while_isolating_leaves_every_event_counted_once_after_the_restart(
    pipeline: Pipeline, place: str
) -> None:
    refuse_poison(pipeline.settings, PLACES[place])
    events, poison = produce_around(pipeline, 47)

    job = pipeline.start(fault="crash_mid_isolation")
    assert job.wait() == 137, job.output()[-3000:]
    assert "fault injection: crash_mid_isolation" in job.output()
    assert pipeline.query("SELECT count(*) FROM aggregation.applied_batches") == [(0,)]
    assert pipeline.query("SELECT count(*) FROM analytics.dead_letters") == [(0,)]

    job = pipeline.start()
    try:
        pipeline.wait_applied(len(events), 1, job)
        assert_isolated(pipeline, events, poison)
    finally:
        assert job.stop() == 0
