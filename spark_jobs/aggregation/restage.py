"""Staging a batch from the driver, when the executors' staging (stage.py) was refused for a data
reason: a value aggregation.staged_records refuses that the checks let through (sink.py).

The batch's rows (render.staged_rows) come to the driver as text, partition by partition;
Postgres types each value by its column, as it does for the executors' JDBC writer
(stringtype=unspecified), and timestamps carry their zone. psycopg inserts them in pieces of
CHUNK rows, each under a savepoint (isolate.py): a refused piece is split down to the row the
database refuses, which is staged as a dead letter instead, with its raw record (read again from
the batch) and the database's message. All in one transaction, which first deletes what the
failed Spark job left. The counts returned are what this transaction wrote, so the fold's
completeness check (unstage.load) still holds the staging area to them.

A dead letter the staging area refuses too stops the batch, as any failure did before.
"""

import logging
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

import psycopg
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)
from pyspark.sql.types import BinaryType, StructField, TimestampType

from spark_jobs.aggregation import isolate, merge, stage, staging
from spark_jobs.aggregation.staging import Counts

log = logging.getLogger("onceflow.aggregation.restage")

Conn = psycopg.Connection[Any]
# Rows per piece, one INSERT each (CHUNK x columns stays under a statement's 65535
# parameters); a piece the database refuses is split in two, down to the row.
CHUNK = 1000
TIMESTAMP = "yyyy-MM-dd HH:mm:ss.SSSSSSXXX"
TYPES = {
    "query_id": "text",
    "batch_id": "bigint",
    **{c.name: c.pg_type for t in (staging.EVENTS, staging.DEAD_LETTERS) for c in t.columns},
}
COLUMNS = (*staging.KEY, *staging.COLUMNS)
INSERT = f"INSERT INTO {staging.AREA} ({', '.join(COLUMNS)}) VALUES "
ROW = f"({', '.join(f'%s::{TYPES[c]}' for c in COLUMNS)})"
DEAD = (*staging.KEY, "kafka_partition", "kafka_offset", "topic", "key", "value", "error")
DEAD_INSERT = (
    f"INSERT INTO {staging.AREA} ({', '.join(DEAD)}) VALUES ({', '.join(['%s'] * len(DEAD))})"
)


def _text(field: StructField) -> Column:
    """A staged column as the driver sends it: bytes as they are, everything else as text."""
    column = F.col(field.name)
    if isinstance(field.dataType, BinaryType):
        return column
    if isinstance(field.dataType, TimestampType):
        return F.date_format(column, TIMESTAMP).alias(field.name)
    return column.cast("string").alias(field.name)


def as_text(rows: DataFrame) -> DataFrame:
    """render.staged_rows with every value as Postgres reads it from text (bytea as bytes)."""
    return rows.select(*[_text(f) for f in rows.schema.fields])


def _chunks(rows: Iterable[Any], size: int) -> Iterator[list[tuple[Any, ...]]]:
    """The rows as tuples in the order of COLUMNS, `size` at a time."""
    values = (tuple(row[c] for c in COLUMNS) for row in rows)
    while chunk := list(islice(values, size)):
        yield chunk


def restage(
    conn: Conn,
    rows: DataFrame,
    query_id: str,
    batch_id: int,
    *,
    topic: str,
    raw: merge.RawRecords | None,
    after_piece: Callable[[], None] | None = None,
) -> Counts:
    """Stage `rows` (render.staged_rows of batch `batch_id` of query `query_id`, read from
    `topic`) from the driver, a refused row as a dead letter; what was staged. `raw` reads raw
    records again; `after_piece` runs after each piece staged (a test's crash point)."""
    error, partition, offset = (COLUMNS.index(c) for c in ("error", *staging.POSITION))
    records = dead = 0
    refused: list[tuple[int, int, str]] = []
    with conn.transaction(), conn.cursor() as cur:
        stage.discard(conn, query_id, batch_id)
        for chunk in _chunks(as_text(rows).toLocalIterator(), CHUNK):

            def insert(start: int, stop: int, chunk: list[tuple[Any, ...]] = chunk) -> None:
                """One INSERT of the piece's rows (at most CHUNK: within a statement's bounds)."""
                values = [value for row in chunk[start:stop] for value in row]
                cur.execute(INSERT + ", ".join([ROW] * (stop - start)), values)
                if after_piece is not None:
                    after_piece()

            _, refusals = isolate.pieces(conn, len(chunk), insert)
            gone = {r.index for r in refusals}
            records += len(chunk)
            dead += sum(1 for i, row in enumerate(chunk) if i not in gone and row[error])
            refused += [
                (int(chunk[r.index][partition]), int(chunk[r.index][offset]), r.reason)
                for r in refusals
            ]
        records_at = {} if raw is None or not refused else raw([(p, o) for p, o, _ in refused])
        for p, o, reason in refused:
            key, value = records_at.get((p, o), (None, None))
            log.warning("record %d@%d is a dead letter: %s", o, p, reason)
            cur.execute(DEAD_INSERT, (query_id, batch_id, p, o, topic, key, value, reason))
            dead += 1
    return Counts(records=records, dead_letters=dead)
