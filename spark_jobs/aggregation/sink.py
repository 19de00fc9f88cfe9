"""The foreachBatch sink: one micro-batch -> one PostgreSQL transaction, exactly once.

Per micro-batch:
1. Skip it if the ledger (aggregation.applied_batches) already holds (query id, batch id): after
   a crash Spark re-runs the last planned batch, which may already be committed in Postgres.
2. Stage it, in ONE Spark job: the executors parse and validate the records (render.py) and
   write their partitions in parallel into the staging area, aggregation.staged_records keyed by
   (query id, batch id), with Spark's JDBC writer (stage.py). The driver first deletes what an
   earlier attempt of the batch staged, and receives only the counts of what was written.
3. Fold it in ONE Postgres transaction, serialised by aggregation.lock_writers() (so two writers
   can neither deadlock nor double count): re-check the ledger, move the staged rows into temp
   tables, each Kafka position once, and check they are exactly what the executors wrote
   (unstage.py; a mismatch, e.g. the UNLOGGED staging area emptied by a Postgres crash-restart,
   fails the batch, which Spark re-runs), fold them into analytics.* with set-based upserts
   (merge.py: drops event ids counted before and remembers the new ones with their journey,
   aggregates per key), record dead letters once, bump freshness, release the staged rows,
   write the ledger row with the Kafka offsets covered, commit.
The tables therefore change exactly once per event, whatever crashes or replays happen.

No record can stop a batch: a record the database refuses for a data reason the checks missed
(SQLSTATE class 22 or 23, sqlstates.py) becomes a dead letter with the database's message, and
the rest of the batch is applied exactly once. When the executors' staging is refused, the
driver stages the batch instead, in pieces under savepoints (restage.py); when the fold is
refused, it rolls back and runs again piece by piece, in one transaction with the ledger row
(refold.py). Every other failure (connection lost, Postgres down, a deadlock) fails the batch as
before: Spark re-runs it and the ledger decides. The set-based fold is unchanged.
"""

import functools
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool
from pyspark.sql import DataFrame

from onceflow.settings import AggregationSettings, Settings
from spark_jobs.aggregation import (
    merge,
    refold,
    render,
    restage,
    sqlstates,
    stage,
    staging,
    unstage,
)
from spark_jobs.aggregation.statements import sql

log = logging.getLogger("onceflow.aggregation.sink")

Conn = psycopg.Connection[tuple[Any, ...]]
# How the fold's transaction applies the loaded batch: (connection, cursor, query id, batch id).
Folder = Callable[[Conn, merge.Cursor, str, int], merge.Merged]

LEDGER_HAS = "SELECT 1 FROM aggregation.applied_batches WHERE query_id = %s AND batch_id = %s"
FRESHNESS_OF = "SELECT last_event_at FROM analytics.freshness WHERE stream = %s"


@dataclass(frozen=True)
class BatchResult:
    """What one micro-batch did (skipped=True: it was already in the ledger)."""

    query_id: str
    batch_id: int
    records: int = 0
    events_new: int = 0
    duplicates: int = 0
    late_events: int = 0
    dead_letters: int = 0
    # Of the dead letters: copies of a counted event id with other content (merge.Merged).
    conflicts: int = 0
    spark_seconds: float = 0.0
    postgres_seconds: float = 0.0
    skipped: bool = False
    offsets: dict[str, dict[str, int]] = field(default_factory=dict)
    # The newest occurred_at applied so far, by any batch (None: not known from this batch).
    newest_event_at: datetime | None = None


def query_id_of(checkpoint: Path) -> str:
    """The streaming query's id, stable across restarts (kept in the checkpoint's metadata)."""
    return str(json.loads((checkpoint / "metadata").read_text())["id"])


def fault(settings: AggregationSettings, point: str, applied: int) -> None:
    """TEST ONLY: die here when ONCEFLOW_FAULT asks for it (AggregationSettings.fault)."""
    if settings.fault == point and applied == settings.fault_after_batches:
        log.warning("fault injection: %s, exiting now (test only)", point)
        logging.shutdown()
        os._exit(137)


# TEST ONLY: what each mutation does to the batch's new events (AggregationSettings.fault).
MUTATIONS = {
    "lose_one_event": (
        f"DELETE FROM {merge.NEW.name} WHERE ctid = (SELECT min(ctid) FROM {merge.NEW.name})"
    ),
    "duplicate_one_event": f"INSERT INTO {merge.NEW.name} SELECT * FROM {merge.NEW.name} LIMIT 1",
}


class PostgresSink:
    """Callable for DataStreamWriter.foreachBatch; owns a bounded Postgres connection pool."""

    def __init__(
        self,
        connections: Settings,
        settings: AggregationSettings,
        checkpoint: Path,
        on_batch: Callable[[BatchResult], None] | None = None,
    ) -> None:
        self.settings = settings
        self.topic = connections.topic
        self.checkpoint = checkpoint
        self.on_batch = on_batch
        self.applied = 0
        self._mutated = False
        # The executors' role may only insert staged rows (migration 0019); the driver's pool
        # below keeps the job's role (ledger, analytics, the staging area's reads and deletes).
        user, password = connections.credentials("spark_stage")
        options = stage.session_options(settings)
        self.target = stage.Target(
            connections.jdbc_url(),
            user,
            password,
            options,
            socket_timeout_s=stage.socket_timeout_s(settings),
        )
        self.pool: ConnectionPool[Conn] = ConnectionPool(
            connections.dsn("spark"),
            min_size=1,
            max_size=settings.agg_pg_max_connections,
            kwargs={"options": options, "application_name": "onceflow-aggregation"},
            name="aggregation",
            open=True,
        )
        self._query_id: str | None = None

    def close(self) -> None:
        """Close the connection pool."""
        self.pool.close()

    def query_id(self) -> str:
        """The id of the query this sink serves (read once from the checkpoint)."""
        if self._query_id is None:
            self._query_id = query_id_of(self.checkpoint)
        return self._query_id

    def already_applied(self, batch_id: int) -> bool:
        """True when the ledger holds this query's batch."""
        with self.pool.connection() as conn:
            return conn.execute(LEDGER_HAS, (self.query_id(), batch_id)).fetchone() is not None

    def newest_event_at(self) -> datetime | None:
        """The newest occurred_at applied to the topic's stream so far (analytics.freshness)."""
        with self.pool.connection() as conn:
            row = conn.execute(FRESHNESS_OF, (self.topic,)).fetchone()
        return None if row is None else row[0]

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        result = self.apply(df, batch_id)
        if self.on_batch is not None:
            self.on_batch(result)

    def apply(self, df: DataFrame, batch_id: int) -> BatchResult:
        """Apply one micro-batch exactly once; return what it did."""
        query_id = self.query_id()
        if self.already_applied(batch_id):
            log.info("batch %d of query %s is already applied: skipped", batch_id, query_id)
            return BatchResult(query_id, batch_id, skipped=True)
        started = time.monotonic()
        staged = self.stage_batch(df, batch_id)
        if not staged.records:
            return BatchResult(query_id, batch_id)
        spark_seconds = time.monotonic() - started
        self.applied += 1
        fault(self.settings, "crash_before_write", self.applied)
        result = self.fold(batch_id, staged, spark_seconds, df)
        fault(self.settings, "crash_after_commit", self.applied)
        return result

    def stage_batch(self, df: DataFrame, batch_id: int) -> staging.Counts:
        """Stage the batch from the executors (replacing an earlier attempt's rows)."""
        query_id = self.query_id()
        with self.pool.connection() as conn, conn.transaction():
            stage.discard(conn, query_id, batch_id)
        rows = render.staged_rows(df, self.settings.agg_max_event_bytes, query_id, batch_id)
        try:
            return stage.stage(rows, self.target)
        except Exception as exc:  # the Spark job failed (py4j): is it the data's fault?
            if not sqlstates.is_data_error(exc):
                raise
            log.warning(
                "batch %d: the staging area refused a record (SQLSTATE %s): staging the batch"
                " from the driver, a refused record becomes a dead letter",
                batch_id,
                ", ".join(sorted({str(state) for state in sqlstates.states_of(exc)})),
            )
        with self.pool.connection() as conn:
            return restage.restage(
                conn,
                rows,
                query_id,
                batch_id,
                topic=self.topic,
                raw=self._raw(df),
                after_piece=self._isolation_fault(self.applied + 1),
            )

    @staticmethod
    def _raw(df: DataFrame | None) -> merge.RawRecords | None:
        """Reads the batch's raw records at some positions again (dead letters' raw bytes)."""
        return None if df is None else functools.partial(render.raw_records, df)

    def _isolation_fault(self, applied: int) -> Callable[[], None]:
        """TEST ONLY: the crash point while refused records are isolated."""
        return lambda: fault(self.settings, "crash_mid_isolation", applied)

    def _mutate(self, cur: merge.Cursor) -> None:
        """TEST ONLY: lose or duplicate one event of the first batch with new events."""
        if not self._mutated:
            self._mutated = True
            log.warning("fault injection: %s (test only)", self.settings.fault)
            cur.execute(MUTATIONS[self.settings.fault])

    def fold(
        self,
        batch_id: int,
        staged: staging.Counts,
        spark_seconds: float,
        raw: DataFrame | None = None,
    ) -> BatchResult:
        """Fold the staged batch into analytics.* and the ledger, in one transaction (`raw`: the
        batch's Kafka rows, read again for the raw bytes of its rare dead letters); when the
        database refuses it for a data reason, again, piece by piece (refold.py)."""
        raw_records = self._raw(raw)
        try:
            return self._fold(
                batch_id, staged, spark_seconds, functools.partial(self._merge, raw_records)
            )
        except psycopg.Error as exc:
            if not sqlstates.psycopg_is_data(exc):
                raise
            log.warning(
                "batch %d: the database refused its fold (SQLSTATE %s: %s): folding it piece by"
                " piece, a refused record becomes a dead letter",
                batch_id,
                exc.sqlstate,
                exc.diag.message_primary or exc,
            )
        isolated = functools.partial(
            refold.fold,
            topic=self.topic,
            raw=raw_records,
            after_piece=self._isolation_fault(self.applied),
        )
        return self._fold(batch_id, staged, spark_seconds, isolated)

    def _merge(
        self,
        raw_records: merge.RawRecords | None,
        _conn: Conn,
        cur: merge.Cursor,
        query_id: str,
        batch_id: int,
    ) -> merge.Merged:
        """The set-based fold of the whole batch (merge.py), with the test-only fault points."""
        return merge.merge(
            cur,
            self.topic,
            query_id=query_id,
            batch_id=batch_id,
            after_first_upsert=lambda: fault(self.settings, "crash_mid_write", self.applied),
            before_upserts=self._mutate if self.settings.fault in MUTATIONS else None,
            raw_records=raw_records,
        )

    def _fold(
        self, batch_id: int, staged: staging.Counts, spark_seconds: float, fold_with: Folder
    ) -> BatchResult:
        """Fold the staged batch with `fold_with` and write the ledger row, in one transaction."""
        query_id = self.query_id()
        started = time.monotonic()
        with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT aggregation.lock_writers()")
            cur.execute(LEDGER_HAS, (query_id, batch_id))
            if cur.fetchone() is not None:  # applied by another writer meanwhile
                unstage.release(cur, query_id, batch_id)
                return BatchResult(query_id, batch_id, skipped=True)
            merge.prepare(cur)
            unstage.load(cur, query_id, batch_id, staged)
            merged = fold_with(conn, cur, query_id, batch_id)
            unstage.release(cur, query_id, batch_id)
            result = BatchResult(
                query_id,
                batch_id,
                records=merged.records,
                events_new=merged.events_new,
                duplicates=merged.valid_records - merged.events_new,
                late_events=merged.late_events,
                dead_letters=merged.dead_letters,
                conflicts=merged.conflicts,
                spark_seconds=spark_seconds,
                offsets=merged.offsets,
                newest_event_at=merged.newest_event_at,
            )
            cur.execute(sql("ledger_insert"), ledger_row(result, self.topic))
        return replace(result, postgres_seconds=time.monotonic() - started)


def ledger_row(result: BatchResult, topic: str) -> dict[str, object]:
    """The parameters of sql/ledger_insert.sql for one applied batch."""
    return {
        "query_id": result.query_id,
        "batch_id": result.batch_id,
        "topic": topic,
        "offsets": json.dumps(result.offsets),
        "records": result.records,
        "events_new": result.events_new,
        "duplicates": result.duplicates,
        "dead_letters": result.dead_letters,
        "late_events": result.late_events,
    }
