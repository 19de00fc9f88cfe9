"""A batch staged the way the executors stage it, without Spark: rows of aggregation.staged_records
(column -> value; a column a row leaves out is NULL) inserted under the job's role, and the
counts the executors report for them (staging.Counts)."""

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg

from spark_jobs.aggregation import staging
from spark_jobs.aggregation.staging import Counts

Row = Mapping[str, Any]


def stage_rows(dsn: str, query_id: str, batch_id: int, rows: Sequence[Row]) -> Counts:
    """Stage `rows` as batch (query_id, batch_id), in one transaction; what was staged."""
    for row in rows:
        unknown = set(row) - set(staging.COLUMNS)
        assert not unknown, f"not a column of {staging.AREA}: {sorted(unknown)}"
    columns = (*staging.KEY, *staging.COLUMNS)
    insert = (
        f"INSERT INTO {staging.AREA} ({', '.join(columns)})"
        f" VALUES ({', '.join(['%s'] * len(columns))})"
    )
    values = [(query_id, batch_id, *[row.get(c) for c in staging.COLUMNS]) for row in rows]
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        if values:
            cur.executemany(insert, values)
    return Counts(
        records=len(rows), dead_letters=sum(1 for row in rows if row.get("error") is not None)
    )
