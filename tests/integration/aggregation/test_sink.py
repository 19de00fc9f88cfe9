"""The sink on real Spark (local, no Kafka) and a scratch database: the executors stage a batch's
parts in parallel, a re-run batch replaces what it staged before, the fold refuses a staged
batch with missing rows (as a crash-restart of Postgres leaves the UNLOGGED staging area), and
what is folded equals the oracle."""

import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pyspark.sql import DataFrame, SparkSession

from onceflow.settings import AggregationSettings, Settings
from spark_jobs.aggregation.sink import PostgresSink
from spark_jobs.aggregation.unstage import IncompleteBatchError
from tests.integration.aggregation.history import Event, Record, make_history
from tests.integration.aggregation.tables import assert_exact, db_tables
from tests.integration.databases import create_database, drop_database
from tests.spark.aggregation.records import KAFKA_TIMESTAMP, RAW
from tests.spark.session import spark

__all__ = ["spark"]
pytestmark = pytest.mark.integration
QUERY = str(uuid.uuid4())
EVENTS = make_history(60, seed=31, days=2)
BAD = [Record(b"k", b"not json"), Record(b"k", None)]
STAGED = (
    "SELECT kind, part, count(*), count(DISTINCT xmin::text) FROM ("
    " SELECT 't_events' AS kind, part, xmin FROM analytics.staged_events"
    "  WHERE query_id = %(q)s AND batch_id = %(b)s"
    " UNION ALL SELECT 't_dead', part, xmin FROM analytics.staged_dead_letters"
    "  WHERE query_id = %(q)s AND batch_id = %(b)s) s GROUP BY kind, part"
)


@dataclass
class Scratch:
    """A migrated scratch database and a sink (query QUERY, topic "t") writing into it."""

    settings: Settings
    sink: PostgresSink

    def query(
        self, sql: str, database: str | None = None, params: dict[str, Any] | None = None
    ) -> list[tuple[Any, ...]]:
        assert database is None
        with psycopg.connect(self.settings.dsn("spark")) as conn:
            return conn.execute(sql, params).fetchall()

    def staged(self, batch_id: int) -> dict[tuple[str, int], tuple[int, int]]:
        """(kind, part) -> (rows, transactions that wrote them) in the staging area."""
        rows = self.query(STAGED, params={"q": QUERY, "b": batch_id})
        return {(kind, part): (n, xacts) for kind, part, n, xacts in rows}


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Scratch]:
    database = f"agg_sink_{uuid.uuid4().hex[:10]}"
    settings = create_database(database)
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    checkpoint.joinpath("metadata").write_text(json.dumps({"id": QUERY}))
    sink = PostgresSink(settings.dsn("spark"), AggregationSettings(), "t", checkpoint)
    try:
        yield Scratch(settings, sink)
    finally:
        sink.close()
        drop_database(database)


def raw(spark: SparkSession, events: Sequence[Event], partitions: int) -> DataFrame:
    """Raw Kafka rows of the events' records and BAD, split into `partitions` partitions."""
    records = [e.record() for e in events] + BAD
    rows = [
        (
            r.key,
            r.value,
            "t",
            i % 3,
            i,
            KAFKA_TIMESTAMP,
            [(k, v.encode() if isinstance(v, str) else v) for k, v in r.headers],
        )
        for i, r in enumerate(records)
    ]
    return spark.createDataFrame(rows, RAW).repartition(partitions)


def test_executors_stage_their_parts_in_parallel(spark: SparkSession, scratch: Scratch) -> None:
    reported = scratch.sink.stage_batch(raw(spark, EVENTS, 4), 0)
    assert {part for kind, part in reported if kind == "t_events"} == {0, 1, 2, 3}
    assert sum(n for (kind, _), n in reported.items() if kind == "t_dead") == len(BAD)
    staged = scratch.staged(0)
    # Every part as reported, each written by one transaction of its own.
    assert {key: rows for key, (rows, _) in staged.items()} == reported
    assert {xacts for _, xacts in staged.values()} == {1}
    xmins = scratch.query("SELECT count(DISTINCT xmin::text) FROM analytics.staged_events")
    assert xmins == [(4,)]


def test_a_rerun_batch_replaces_its_staged_rows_and_is_folded_once(
    spark: SparkSession, scratch: Scratch
) -> None:
    scratch.sink.stage_batch(raw(spark, EVENTS, 4), 0)
    again = scratch.sink.stage_batch(raw(spark, EVENTS, 2), 0)  # the re-run splits it otherwise
    assert {key: rows for key, (rows, _) in scratch.staged(0).items()} == again
    result = scratch.sink.fold(0, again, spark_seconds=0.0)
    assert (result.events_new, result.dead_letters, result.skipped) == (len(EVENTS), 2, False)
    assert_exact(scratch, EVENTS)
    # Batch 1 fails after staging; batch 2 (every event again) is folded and releases both.
    scratch.sink.stage_batch(raw(spark, EVENTS, 2), 1)
    replayed = scratch.sink.apply(raw(spark, EVENTS, 3), 2)
    assert (replayed.events_new, replayed.duplicates) == (0, len(EVENTS))
    assert_exact(scratch, EVENTS)
    assert scratch.query("SELECT count(*) FROM analytics.staged_events") == [(0,)]
    assert scratch.query("SELECT count(*) FROM analytics.staged_dead_letters") == [(0,)]
    ledger = scratch.query("SELECT batch_id FROM analytics.applied_batches ORDER BY 1")
    assert ledger == [(0,), (2,)]


def test_a_staged_batch_with_missing_rows_is_refused(spark: SparkSession, scratch: Scratch) -> None:
    df = raw(spark, EVENTS, 2)
    before = db_tables(scratch)
    reported = scratch.sink.stage_batch(df, 0)
    scratch.query(
        "DELETE FROM analytics.staged_events WHERE ctid = ANY (ARRAY("
        " SELECT ctid FROM analytics.staged_events WHERE part = 1 LIMIT 3)) RETURNING 1"
    )
    with pytest.raises(IncompleteBatchError, match="refused"):
        scratch.sink.fold(0, reported, spark_seconds=0.0)
    assert db_tables(scratch) == before
    assert scratch.query("SELECT count(*) FROM analytics.applied_batches") == [(0,)]
    # Emptied entirely (a crash-restart of Postgres truncates UNLOGGED tables): refused too.
    scratch.query("DELETE FROM analytics.staged_events RETURNING 1")
    with pytest.raises(IncompleteBatchError):
        scratch.sink.fold(0, reported, spark_seconds=0.0)
    # Spark re-runs the failed batch: staged again, then folded exactly once.
    result = scratch.sink.apply(df, 0)
    assert result.events_new == len(EVENTS)
    assert_exact(scratch, EVENTS)
