"""The foreachBatch sink: one micro-batch -> one PostgreSQL transaction, exactly once.

Per micro-batch:
1. Skip it if the ledger (analytics.applied_batches) already holds (query id, batch id): Spark
   re-runs the last planned batch after a crash, and that batch may already be committed.
2. Spark parses the records, drops in-batch duplicate event ids and renders, in ONE job, COPY
   payloads: the batch's event ids, its dead letters, its Kafka offsets and the per-key deltas
   of every table (transforms.py).
3. In ONE Postgres transaction (serialised by an advisory lock, so concurrent writers can
   neither deadlock nor double count): COPY the event ids into a temp table and find those
   already in analytics.applied_events (counted by an earlier batch: a duplicate on the
   topic). Only if there are any, Spark recomputes the deltas without them. Then insert the
   new ids, add the deltas with set-based INSERT ... SELECT ... ON CONFLICT DO UPDATE, record
   dead letters (ON CONFLICT DO NOTHING: each bad record once), bump freshness and write the
   ledger row. Commit.
The tables therefore change exactly once per event, whatever crashes or replays happen.
"""

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_jobs.aggregation import copytext, parse, transforms
from spark_jobs.aggregation.config import AggregationSettings

log = logging.getLogger("onceflow.aggregation.sink")

Conn = psycopg.Connection[tuple[Any, ...]]

LOCK_KEY = 0x0F1CE_F10  # pg_advisory_xact_lock key shared by every writer of analytics.*

AGGREGATE_KINDS = ("daily", "customer", "product", "state", "fresh")

TEMP_TABLES = (
    "CREATE TEMP TABLE IF NOT EXISTS t_ids (event_id uuid) ON COMMIT DELETE ROWS",
    "CREATE TEMP TABLE IF NOT EXISTS t_daily (LIKE analytics.daily_sales) ON COMMIT DELETE ROWS",
    "CREATE TEMP TABLE IF NOT EXISTS t_customer (LIKE analytics.customer_sales)"
    " ON COMMIT DELETE ROWS",
    "CREATE TEMP TABLE IF NOT EXISTS t_product (LIKE analytics.product_sales)"
    " ON COMMIT DELETE ROWS",
    "CREATE TEMP TABLE IF NOT EXISTS t_state (LIKE analytics.order_state) ON COMMIT DELETE ROWS",
    "CREATE TEMP TABLE IF NOT EXISTS t_dead (topic text, kafka_partition integer,"
    " kafka_offset bigint, key bytea, value bytea, error text) ON COMMIT DELETE ROWS",
)

COPY_INTO = {
    "ids": "COPY t_ids (event_id) FROM STDIN",
    "daily": f"COPY t_daily ({', '.join(transforms.DAILY_SALES_COLUMNS)}) FROM STDIN",
    "customer": f"COPY t_customer ({', '.join(transforms.CUSTOMER_SALES_COLUMNS)}) FROM STDIN",
    "product": f"COPY t_product ({', '.join(transforms.PRODUCT_SALES_COLUMNS)}) FROM STDIN",
    "state": f"COPY t_state ({', '.join(transforms.ORDER_STATE_COLUMNS)}) FROM STDIN",
    "dead": f"COPY t_dead ({', '.join(parse.DEAD_LETTER_COLUMNS)}) FROM STDIN",
}

UPSERTS = {
    "daily": """
        INSERT INTO analytics.daily_sales AS d SELECT * FROM t_daily
        ON CONFLICT (day, currency) DO UPDATE SET
            orders_placed    = d.orders_placed    + EXCLUDED.orders_placed,
            orders_paid      = d.orders_paid      + EXCLUDED.orders_paid,
            orders_shipped   = d.orders_shipped   + EXCLUDED.orders_shipped,
            orders_cancelled = d.orders_cancelled + EXCLUDED.orders_cancelled,
            placed_cents     = d.placed_cents     + EXCLUDED.placed_cents,
            paid_cents       = d.paid_cents       + EXCLUDED.paid_cents,
            cancelled_cents  = d.cancelled_cents  + EXCLUDED.cancelled_cents
    """,
    "customer": """
        INSERT INTO analytics.customer_sales AS c SELECT * FROM t_customer
        ON CONFLICT (customer_id) DO UPDATE SET
            orders_placed   = c.orders_placed   + EXCLUDED.orders_placed,
            placed_cents    = c.placed_cents    + EXCLUDED.placed_cents,
            paid_cents      = c.paid_cents      + EXCLUDED.paid_cents,
            cancelled_cents = c.cancelled_cents + EXCLUDED.cancelled_cents,
            first_order_at  = LEAST(c.first_order_at, EXCLUDED.first_order_at),
            last_order_at   = GREATEST(c.last_order_at, EXCLUDED.last_order_at)
    """,
    "product": """
        INSERT INTO analytics.product_sales AS p SELECT * FROM t_product
        ON CONFLICT (sku) DO UPDATE SET
            units_placed    = p.units_placed    + EXCLUDED.units_placed,
            placed_cents    = p.placed_cents    + EXCLUDED.placed_cents,
            units_cancelled = p.units_cancelled + EXCLUDED.units_cancelled,
            cancelled_cents = p.cancelled_cents + EXCLUDED.cancelled_cents
    """,
    "state": """
        INSERT INTO analytics.order_state AS o SELECT * FROM t_state
        ON CONFLICT (order_id) DO UPDATE SET
            status        = EXCLUDED.status,
            status_rank   = EXCLUDED.status_rank,
            last_event_at = EXCLUDED.last_event_at
        WHERE (EXCLUDED.last_event_at, EXCLUDED.status_rank) > (o.last_event_at, o.status_rank)
    """,
}

FRESHNESS_UPSERT = """
    INSERT INTO analytics.freshness AS f (stream, last_event_at, last_applied_at, events_applied)
    VALUES (%s, %s::timestamptz, clock_timestamp(), %s)
    ON CONFLICT (stream) DO UPDATE SET
        last_event_at   = GREATEST(f.last_event_at, EXCLUDED.last_event_at),
        last_applied_at = EXCLUDED.last_applied_at,
        events_applied  = f.events_applied + EXCLUDED.events_applied
"""

LEDGER_INSERT = """
    INSERT INTO analytics.applied_batches (query_id, batch_id, topic, offsets, records,
        events_new, duplicates, dead_letters, committed_at)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, clock_timestamp())
"""


@dataclass(frozen=True)
class BatchResult:
    """What one micro-batch did (skipped=True: it was already in the ledger)."""

    query_id: str
    batch_id: int
    records: int = 0
    events_new: int = 0
    duplicates: int = 0
    dead_letters: int = 0
    spark_seconds: float = 0.0
    postgres_seconds: float = 0.0
    skipped: bool = False
    offsets: dict[str, dict[str, int]] = field(default_factory=dict)


Payloads = dict[str, tuple[str, int]]


def batch_parts(
    classified: DataFrame, already_counted: DataFrame | None = None
) -> dict[str, DataFrame]:
    """COPY-line DataFrames of one batch: ids, offsets, dead letters and every table's deltas.

    `already_counted`: event ids (one `event_id` column) to leave out of the deltas.
    """
    events = transforms.distinct_events(parse.valid_events(classified))
    if already_counted is not None:
        events = events.join(F.broadcast(already_counted), "event_id", "left_anti")
    offsets = classified.groupBy("kafka_partition").agg(
        F.min("kafka_offset").alias("first"),
        F.max("kafka_offset").alias("last"),
        F.count(F.lit(1)).alias("records"),
    )
    lines = copytext.copy_lines
    return {
        "ids": lines(events, ["event_id"]),
        "offsets": lines(offsets, ["kafka_partition", "first", "last", "records"]),
        "dead": lines(parse.dead_letters(classified), parse.DEAD_LETTER_COLUMNS, ["key", "value"]),
        "daily": lines(transforms.daily_sales(events), transforms.DAILY_SALES_COLUMNS),
        "customer": lines(transforms.customer_sales(events), transforms.CUSTOMER_SALES_COLUMNS),
        "product": lines(transforms.product_sales(events), transforms.PRODUCT_SALES_COLUMNS),
        "state": lines(transforms.order_state(events), transforms.ORDER_STATE_COLUMNS),
        "fresh": lines(
            transforms.freshness(events), ["stream", "last_event_at", "events_applied"]
        ),
    }


def collect_payloads(parts: dict[str, DataFrame], kinds: tuple[str, ...] | None = None) -> Payloads:
    """Run ONE Spark job rendering the chosen parts; kind -> (COPY text, rows)."""
    chosen = {k: v for k, v in parts.items() if kinds is None or k in kinds}
    return {
        row["kind"]: (row["payload"] + "\n", int(row["rows"]))
        for row in copytext.bundle(chosen).collect()
    }


def query_id_of(checkpoint: Path) -> str:
    """The streaming query's id, stable across restarts (kept in the checkpoint's metadata)."""
    return str(json.loads((checkpoint / "metadata").read_text())["id"])


def _fault(settings: AggregationSettings, point: str, applied: int) -> None:
    """TEST ONLY: die here when ONCEFLOW_FAULT asks for it (see config.AggregationSettings)."""
    if settings.fault == point and applied == settings.fault_after_batches:
        log.warning("fault injection: %s, exiting now (test only)", point)
        logging.shutdown()
        os._exit(137)


class PostgresSink:
    """Callable for DataStreamWriter.foreachBatch; owns a bounded Postgres connection pool."""

    def __init__(
        self,
        dsn: str,
        settings: AggregationSettings,
        topic: str,
        checkpoint: Path,
        on_batch: Callable[[BatchResult], None] | None = None,
    ) -> None:
        self.settings = settings
        self.topic = topic
        self.checkpoint = checkpoint
        self.on_batch = on_batch
        self.applied = 0
        self.pool: ConnectionPool[Conn] = ConnectionPool(
            dsn,
            min_size=1,
            max_size=settings.agg_pg_max_connections,
            kwargs={
                "options": f"-c statement_timeout={settings.agg_pg_statement_timeout_ms}"
                " -c TimeZone=UTC",
            },
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
            row = conn.execute(
                "SELECT 1 FROM analytics.applied_batches WHERE query_id = %s AND batch_id = %s",
                (self.query_id(), batch_id),
            ).fetchone()
            return row is not None

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
        classified = parse.classify(df, self.settings.agg_max_event_bytes).persist()
        try:
            parts = batch_parts(classified)
            payloads = collect_payloads(parts)
            offsets = _offsets(payloads)
            records = sum(o["records"] for o in offsets.values())
            if records == 0:
                return BatchResult(query_id, batch_id)
            self.applied += 1
            _fault(self.settings, "crash_before_write", self.applied)
            spark_seconds = time.monotonic() - started
            result = self._write(classified, batch_id, payloads, offsets, records, spark_seconds)
        finally:
            classified.unpersist()
        _fault(self.settings, "crash_after_commit", self.applied)
        return result

    def _write(
        self,
        classified: DataFrame,
        batch_id: int,
        payloads: Payloads,
        offsets: dict[str, dict[str, int]],
        records: int,
        spark_seconds: float,
    ) -> BatchResult:
        query_id = self.query_id()
        started = time.monotonic()
        extra_spark = 0.0
        with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            cur.execute(
                "SELECT 1 FROM analytics.applied_batches WHERE query_id = %s AND batch_id = %s",
                (query_id, batch_id),
            )
            if cur.fetchone() is not None:  # applied by another writer meanwhile
                return BatchResult(query_id, batch_id, skipped=True)
            for statement in TEMP_TABLES:
                cur.execute(statement)
            _copy(cur, payloads, "ids")
            cur.execute(
                "SELECT t.event_id::text FROM t_ids t"
                " JOIN analytics.applied_events a USING (event_id)"
            )
            counted_before = [row[0] for row in cur.fetchall()]
            if counted_before:
                # Rare: events already counted by an earlier batch. Recompute without them.
                t0 = time.monotonic()
                spark = classified.sparkSession
                known = spark.createDataFrame([(i,) for i in counted_before], "event_id string")
                payloads = {
                    **{k: v for k, v in payloads.items() if k not in AGGREGATE_KINDS},
                    **collect_payloads(batch_parts(classified, known), AGGREGATE_KINDS),
                }
                extra_spark = time.monotonic() - t0
            cur.execute(
                "INSERT INTO analytics.applied_events (event_id) SELECT event_id FROM t_ids"
                " ON CONFLICT DO NOTHING"
            )
            for kind, upsert in UPSERTS.items():
                if kind in payloads:
                    _copy(cur, payloads, kind)
                    cur.execute(upsert)
                if kind == "daily":
                    _fault(self.settings, "crash_mid_write", self.applied)
            dead = 0
            if "dead" in payloads:
                _copy(cur, payloads, "dead")
                cur.execute(
                    "INSERT INTO analytics.dead_letters"
                    f" ({', '.join(parse.DEAD_LETTER_COLUMNS)})"
                    f" SELECT {', '.join(parse.DEAD_LETTER_COLUMNS)} FROM t_dead"
                    " ON CONFLICT DO NOTHING"
                )
                dead = cur.rowcount
            last_event_at, events_new = _freshness(payloads)
            cur.execute(FRESHNESS_UPSERT, (self.topic, last_event_at, events_new))
            valid_records = records - payloads.get("dead", ("", 0))[1]
            duplicates = valid_records - events_new
            cur.execute(
                LEDGER_INSERT,
                (
                    query_id,
                    batch_id,
                    self.topic,
                    json.dumps(offsets),
                    records,
                    events_new,
                    duplicates,
                    dead,
                ),
            )
        return BatchResult(
            query_id,
            batch_id,
            records=records,
            events_new=events_new,
            duplicates=duplicates,
            dead_letters=dead,
            spark_seconds=spark_seconds + extra_spark,
            postgres_seconds=time.monotonic() - started - extra_spark,
            offsets=offsets,
        )


def _copy(cur: psycopg.Cursor[Any], payloads: Payloads, kind: str) -> None:
    if kind not in payloads:
        return
    with cur.copy(COPY_INTO[kind]) as copy:
        copy.write(payloads[kind][0])


def _offsets(payloads: Payloads) -> dict[str, dict[str, int]]:
    """{"partition": {"first", "last", "records"}} of the batch's Kafka records."""
    result: dict[str, dict[str, int]] = {}
    for line in payloads.get("offsets", ("", 0))[0].splitlines():
        partition, first, last, records = line.split("\t")
        result[partition] = {"first": int(first), "last": int(last), "records": int(records)}
    return result


def _freshness(payloads: Payloads) -> tuple[str | None, int]:
    """(latest occurred_at, number of new events) of the batch."""
    line = payloads.get("fresh", ("", 0))[0].strip()
    if not line:
        return None, 0
    _, last_event_at, events = line.split("\t")
    return last_event_at, int(events)
