"""The sink on real Spark (local, no Kafka) and a scratch database: the executors stage a batch's
partitions in parallel with the JDBC writer and report what they wrote, a re-run batch replaces
what it staged before, a partition staged twice (a retried task) is folded once, the fold refuses
a staged batch with missing rows (as a crash-restart of Postgres leaves the UNLOGGED staging
area) and changes nothing then, the staged rows are released once folded, and what is folded
equals the oracle."""

import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from onceflow.settings import AggregationSettings, Settings
from spark_jobs.aggregation.sink import PostgresSink
from spark_jobs.aggregation.staging import Counts
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
RECORDS = Counts(records=len(EVENTS) + len(BAD), dead_letters=len(BAD))
OF_BATCH = "FROM aggregation.staged_records WHERE query_id = %(q)s AND batch_id = %(b)s"


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
            cur = conn.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def staged(self, batch_id: int) -> Counts:
        """What the staging area holds of the batch (as the executors count it)."""
        ((records, dead),) = self.query(
            f"SELECT count(*), count(error) {OF_BATCH}", params={"q": QUERY, "b": batch_id}
        )
        return Counts(records=records, dead_letters=dead)

    def transactions(self, batch_id: int) -> list[int]:
        """The sizes of the transactions that wrote the batch's staged rows, ascending."""
        rows = self.query(
            f"SELECT count(*) {OF_BATCH} GROUP BY xmin::text ORDER BY 1",
            params={"q": QUERY, "b": batch_id},
        )
        return [n for (n,) in rows]

    def count(self, table: str) -> int:
        ((n,),) = self.query(f"SELECT count(*) FROM {table}")
        return int(n)

    def ledger(self) -> list[tuple[Any, ...]]:
        return self.query("SELECT batch_id FROM aggregation.applied_batches ORDER BY 1")


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Scratch]:
    database = f"agg_sink_{uuid.uuid4().hex[:10]}"
    settings = create_database(database).model_copy(update={"topic": "t"})
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    checkpoint.joinpath("metadata").write_text(json.dumps({"id": QUERY}))
    sink = PostgresSink(settings, AggregationSettings(), checkpoint)
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


def partition_sizes(df: DataFrame) -> list[int]:
    """The sizes of the DataFrame's non-empty partitions, ascending."""
    sizes = df.groupBy(F.spark_partition_id()).count().collect()
    return sorted(int(row["count"]) for row in sizes)


def test_executors_stage_their_partitions_in_parallel(
    spark: SparkSession, scratch: Scratch
) -> None:
    df = raw(spark, EVENTS, 4)
    sizes = partition_sizes(df)
    assert len(sizes) > 1
    reported = scratch.sink.stage_batch(df, 0)
    assert reported == RECORDS
    assert scratch.staged(0) == reported
    # Each non-empty partition written by one transaction of its own (one Spark task each).
    assert scratch.transactions(0) == sizes
    # Every record once, at its Kafka position.
    positions = scratch.query(
        f"SELECT kafka_partition, kafka_offset {OF_BATCH} ORDER BY 2", params={"q": QUERY, "b": 0}
    )
    assert positions == [(i % 3, i) for i in range(RECORDS.records)]


def test_a_rerun_batch_replaces_its_staged_rows_and_is_folded_once(
    spark: SparkSession, scratch: Scratch
) -> None:
    first = scratch.sink.stage_batch(raw(spark, EVENTS, 4), 0)
    again = scratch.sink.stage_batch(raw(spark, EVENTS, 2), 0)  # the re-run splits it otherwise
    assert first == again == RECORDS
    assert scratch.staged(0) == again
    assert len(scratch.transactions(0)) == 2  # only the re-run's rows are left
    result = scratch.sink.fold(0, again, spark_seconds=0.0)
    assert (result.events_new, result.dead_letters, result.skipped) == (len(EVENTS), 2, False)
    assert_exact(scratch, EVENTS)
    assert scratch.count("aggregation.staged_records") == 0  # released once folded
    # Batch 1 fails after staging; batch 2 (every event again) is folded and releases both.
    scratch.sink.stage_batch(raw(spark, EVENTS, 2), 1)
    assert scratch.staged(1) == RECORDS
    replayed = scratch.sink.apply(raw(spark, EVENTS, 3), 2)
    assert (replayed.events_new, replayed.duplicates) == (0, len(EVENTS))
    assert_exact(scratch, EVENTS)
    assert scratch.count("aggregation.staged_records") == 0
    assert scratch.count("analytics.dead_letters") == len(BAD)
    assert scratch.ledger() == [(0,), (2,)]


def test_a_partition_staged_twice_is_folded_once(spark: SparkSession, scratch: Scratch) -> None:
    reported = scratch.sink.stage_batch(raw(spark, EVENTS, 3), 0)
    # A task attempt that committed and was lost with its executor: its partition is written
    # again by the retry (here, the partition that holds a dead letter, and events).
    again = scratch.query(
        "INSERT INTO aggregation.staged_records SELECT * FROM aggregation.staged_records"
        f" WHERE xmin::text = (SELECT min(xmin::text) {OF_BATCH} AND error IS NOT NULL)"
        " RETURNING error IS NULL",
        params={"q": QUERY, "b": 0},
    )
    assert {valid for (valid,) in again} == {True, False}
    assert scratch.staged(0).records == reported.records + len(again)
    result = scratch.sink.fold(0, reported, spark_seconds=0.0)
    assert (result.records, result.events_new, result.duplicates) == (
        RECORDS.records,
        len(EVENTS),
        0,
    )
    assert result.dead_letters == len(BAD)
    assert_exact(scratch, EVENTS)
    assert scratch.count("analytics.dead_letters") == len(BAD)
    assert scratch.count("aggregation.applied_events") == len(EVENTS)
    assert scratch.count("aggregation.staged_records") == 0
    assert scratch.ledger() == [(0,)]


@pytest.mark.parametrize("kind", ["error IS NULL", "error IS NOT NULL"], ids=["events", "dead"])
def test_a_staged_batch_with_missing_rows_is_refused(
    spark: SparkSession, scratch: Scratch, kind: str
) -> None:
    df = raw(spark, EVENTS, 2)
    before = db_tables(scratch)
    reported = scratch.sink.stage_batch(df, 0)
    deleted = scratch.query(
        "DELETE FROM aggregation.staged_records WHERE ctid = ANY (ARRAY("
        f" SELECT ctid {OF_BATCH} AND {kind} LIMIT 1)) RETURNING 1",
        params={"q": QUERY, "b": 0},
    )
    assert len(deleted) == 1
    with pytest.raises(IncompleteBatchError, match="refused"):
        scratch.sink.fold(0, reported, spark_seconds=0.0)
    # Rolled back whole: nothing folded, nothing recorded, nothing released.
    assert db_tables(scratch) == before
    for table in (
        "aggregation.applied_batches",
        "aggregation.applied_events",
        "analytics.dead_letters",
    ):
        assert scratch.count(table) == 0, table
    assert scratch.staged(0).records == reported.records - 1
    # Emptied entirely (a crash-restart of Postgres truncates UNLOGGED tables): refused too.
    scratch.query("DELETE FROM aggregation.staged_records")
    with pytest.raises(IncompleteBatchError, match="refused"):
        scratch.sink.fold(0, reported, spark_seconds=0.0)
    assert db_tables(scratch) == before
    assert scratch.ledger() == []
    # Spark re-runs the failed batch: staged again, then folded exactly once.
    result = scratch.sink.apply(df, 0)
    assert (result.events_new, result.dead_letters) == (len(EVENTS), len(BAD))
    assert_exact(scratch, EVENTS)
    assert scratch.count("analytics.dead_letters") == len(BAD)
    assert scratch.count("aggregation.staged_records") == 0
    assert scratch.ledger() == [(0,)]
    # And once only: Spark re-running it again after the commit skips it.
    assert scratch.sink.apply(df, 0).skipped
    assert_exact(scratch, EVENTS)
