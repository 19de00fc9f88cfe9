"""Executors stage a micro-batch in Postgres, in parallel: each Spark task writes its parts (rows
of render.batch_parts: one staged table's COPY text of one input partition) over its own short
connection into the staging area (analytics.staged_*, staging.py).

Each part is written in ONE transaction: a transaction advisory lock on (query, batch, table,
part), DELETE that part's staged rows, COPY the payload, commit. A retried (or speculative) task
attempt therefore replaces its part atomically, never adds to it. The driver collects only
(kind, part, rows) per part: what the fold checks the staging area against (unstage.py).
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg
from pyspark.sql import DataFrame

from onceflow.settings import AggregationSettings
from spark_jobs.aggregation import staging

Conn = psycopg.Connection[tuple[Any, ...]]
Part = tuple[str, int, int]  # (kind: the staged table's name, part, rows staged)
APP_NAME = "onceflow-aggregation-stage"
# The two-key form: a lock space of its own, apart from the one-key locks of
# analytics.lock_writers() and maintenance.
LOCK = "SELECT pg_advisory_xact_lock(%s::integer, hashtext(%s))"
STAGE_LOCK_CLASS = 0x0F1CEF12


class StagingError(RuntimeError):
    """Postgres read another number of rows from a part than Spark rendered."""


def session_options(settings: AggregationSettings) -> str:
    """The session settings of every connection of the job (the driver's and the executors')."""
    return (
        f"-c statement_timeout={settings.agg_pg_statement_timeout_ms}"
        f" -c temp_buffers={settings.agg_pg_temp_buffers}"
        f" -c work_mem={settings.agg_pg_work_mem} -c TimeZone=UTC"
    )


@dataclass(frozen=True)
class PartWriter:
    """The function of mapPartitions on the executors (pickled there, DSN included): writes each
    part of its Spark partition, returns (kind, part, rows) for each."""

    dsn: str = field(repr=False)  # holds the password
    options: str
    query_id: str
    batch_id: int

    def __call__(self, parts: Iterable[Any]) -> Iterator[Part]:
        todo = list(parts)  # a few rows: one per staged table and input partition
        if not todo:
            return iter(())
        with psycopg.connect(
            self.dsn, options=self.options, application_name=APP_NAME, autocommit=True
        ) as conn:
            return iter(
                [self.write(conn, p["kind"], p["part"], p["payload"], p["rows"]) for p in todo]
            )

    def write(self, conn: Conn, kind: str, part: int, payload: str, rows: int) -> Part:
        """Replace part `part` of staged table `kind` with `payload` (`rows` COPY lines)."""
        table = staging.BY_KIND[kind]
        key = (self.query_id, self.batch_id, part)
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(LOCK, (STAGE_LOCK_CLASS, f"{self.query_id}/{self.batch_id}/{kind}/{part}"))
            cur.execute(
                f"DELETE FROM {table.area} WHERE query_id = %s AND batch_id = %s AND part = %s",
                key,
            )
            with cur.copy(table.stage()) as copy:
                copy.write(payload)
                copy.write("\n")
            if cur.rowcount != rows:
                raise StagingError(f"{kind} part {part}: {cur.rowcount} rows staged of {rows}")
        return kind, part, rows


def discard(conn: Conn, query_id: str, batch_id: int) -> None:
    """Delete what an earlier attempt of this batch staged (it may have had other parts)."""
    for table in staging.BY_KIND.values():
        conn.execute(
            f"DELETE FROM {table.area} WHERE query_id = %s AND batch_id = %s", (query_id, batch_id)
        )


def stage(parts: DataFrame, writer: PartWriter) -> dict[tuple[str, int], int]:
    """Write render.batch_parts on the executors; (kind, part) -> rows staged."""
    return {(kind, part): rows for kind, part, rows in parts.rdd.mapPartitions(writer).collect()}
