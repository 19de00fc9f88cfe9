"""The executors write a micro-batch into the staging area in parallel (render.first_pass ->
analytics.staged_records) with Spark's JDBC writer: each Spark task opens its own connection and
writes its partition in one transaction. No Python runs on the executors, and the driver
receives only counts, observed in the same Spark job, that the fold checks the staging area
against (unstage.py). A batch with records whose text is not canonical (rare) takes a second
Spark job for them (render.second_pass), counted the same way.

A retried (or speculative) task attempt may leave its partition's rows twice, when an attempt
committed and was then lost with its executor: the fold reads each Kafka position once. The
driver first deletes what an earlier attempt of the batch staged.
"""

import logging
from dataclasses import dataclass, field
from typing import Any

import psycopg
from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from onceflow.settings import AggregationSettings
from spark_jobs.aggregation import render, staging
from spark_jobs.aggregation.staging import Counts

log = logging.getLogger("onceflow.aggregation.stage")
Conn = psycopg.Connection[tuple[Any, ...]]
APP_NAME = "onceflow-aggregation-stage"
# Rows per JDBC batch (the driver rewrites each into multi-row INSERTs).
BATCH_ROWS = 5000


def session_options(settings: AggregationSettings) -> str:
    """The session settings of the job's connections (the driver's and the executors'; pgjdbc
    sets the session TimeZone to the JVM's, which changes nothing stored: timestamptz)."""
    return (
        f"-c statement_timeout={settings.agg_pg_statement_timeout_ms}"
        f" -c temp_buffers={settings.agg_pg_temp_buffers}"
        f" -c work_mem={settings.agg_pg_work_mem} -c TimeZone=UTC"
    )


@dataclass(frozen=True)
class Target:
    """Where and as whom the executors write: the JDBC URL, the job's role, its session."""

    url: str
    user: str
    password: str = field(repr=False)
    options: str = ""

    def properties(self) -> dict[str, str]:
        """The JDBC connection properties (Spark hands them to every task)."""
        return {
            "driver": "org.postgresql.Driver",
            "user": self.user,
            "password": self.password,
            "options": self.options,
            "ApplicationName": APP_NAME,
            "batchsize": str(BATCH_ROWS),
            "isolationLevel": "READ_COMMITTED",
        }


def discard(conn: Conn, query_id: str, batch_id: int) -> None:
    """Delete what an earlier attempt of this batch staged."""
    conn.execute(
        f"DELETE FROM {staging.AREA} WHERE query_id = %s AND batch_id = %s", (query_id, batch_id)
    )


def _write(rows: DataFrame, target: Target, first: bool) -> tuple[Counts, int]:
    """Write `rows` from the executors, in one Spark job (of render.first_pass's, those not
    DEFERRED); what was written, and how many rows were deferred."""
    # Counted where the rows are written: nothing may shuffle between observe and the write.
    observed = Observation()
    left = F.col(render.DEFERRED) if first else F.lit(False)
    counted = rows.observe(
        observed,
        F.count_if(~left).alias("records"),
        F.count_if(~left & F.col("error").isNotNull()).alias("dead_letters"),
        F.count_if(left).alias("deferred"),
    )
    written = render.kept(counted) if first else counted
    written.write.jdbc(target.url, staging.AREA, mode="append", properties=target.properties())
    got = observed.get
    counts = Counts(records=int(got["records"]), dead_letters=int(got["dead_letters"]))
    return counts, int(got["deferred"])


def stage(batch: render.Batch, target: Target) -> Counts:
    """Write the batch's rows (render.first_pass, then, only for a batch with records it
    deferred, render.second_pass) from the executors; what was written."""
    first, deferred = _write(batch.first_pass(), target, first=True)
    if not deferred:
        return first
    log.info(
        "batch %d: %d records not in a canonical form: checked in a second pass",
        batch.batch_id,
        deferred,
    )
    second, _ = _write(batch.second_pass(), target, first=False)
    if second.records != deferred:
        raise RuntimeError(
            f"batch {batch.batch_id}: the second pass staged {second.records} records,"
            f" the first deferred {deferred}"
        )
    return Counts(
        records=first.records + second.records,
        dead_letters=first.dead_letters + second.dead_letters,
    )
