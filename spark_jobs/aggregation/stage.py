"""The executors write a micro-batch into the staging area in parallel (render.staged_rows ->
aggregation.staged_records) with Spark's JDBC writer: each Spark task opens its own connection and
writes its partition in one transaction. No Python runs on the executors, and the driver
receives only two counts, observed in the same Spark job, that the fold checks the staging area
against (unstage.py).

A retried (or speculative) task attempt may leave its partition's rows twice, when an attempt
committed and was then lost with its executor: the fold reads each Kafka position once. The
driver first deletes what an earlier attempt of the batch staged.
"""

from dataclasses import dataclass, field
from typing import Any

import psycopg
from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from onceflow.settings import AggregationSettings
from spark_jobs.aggregation import staging
from spark_jobs.aggregation.staging import Counts

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


def socket_timeout_s(settings: AggregationSettings) -> int:
    """How long an executor waits on a connection that says nothing before it drops it (the
    task fails and Spark runs it again): longer than any statement may run, so only a dead
    connection reaches it. pgjdbc's default waits for ever, and a batch with it (make
    test-network: a connection lost with its proxy) never ended. Without a statement timeout
    (0) a statement may run for ever, so none is set either."""
    timeout_ms = settings.agg_pg_statement_timeout_ms
    return -(-timeout_ms // 1000) + 30 if timeout_ms > 0 else 0


@dataclass(frozen=True)
class Target:
    """Where and as whom the executors write: the JDBC URL, the executors' staging-only role
    (insert into staging.INBOX, nothing else), its session, how long a silent connection lives."""

    url: str
    user: str
    password: str = field(repr=False)
    options: str = ""
    socket_timeout_s: int = 0  # 0: for ever

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
            "socketTimeout": str(self.socket_timeout_s),
        }


def discard(conn: Conn, query_id: str, batch_id: int) -> None:
    """Delete what an earlier attempt of this batch staged."""
    conn.execute(
        f"DELETE FROM {staging.AREA} WHERE query_id = %s AND batch_id = %s", (query_id, batch_id)
    )


def stage(rows: DataFrame, target: Target) -> Counts:
    """Write render.staged_rows from the executors, in one Spark job; what was written."""
    # Counted where the rows are written: nothing may shuffle between observe and the write.
    observed = Observation()
    counted = rows.observe(
        observed,
        F.count(F.lit(1)).alias("records"),
        F.count("error").alias("dead_letters"),
    )
    counted.write.jdbc(target.url, staging.INBOX, mode="append", properties=target.properties())
    got = observed.get
    return Counts(records=int(got["records"]), dead_letters=int(got["dead_letters"]))
