"""The fold's side of the staging area, inside the batch's transaction: the staged batch is moved
into the temp tables merge.py folds (each Kafka position once), checked complete against what
the executors wrote, and released (with any older batch of the query, left by an attempt that
failed).

The staging area is UNLOGGED: a crash-restart of Postgres empties it. A batch whose staged rows
differ from the executors' counts is refused (IncompleteBatchError): its transaction rolls
back, the micro-batch fails, and Spark re-runs it from Kafka. A partial batch is never folded.
"""

from typing import Any

import psycopg

from spark_jobs.aggregation import staging
from spark_jobs.aggregation.staging import Counts

Cursor = psycopg.Cursor[Any]
RELEASE = f"DELETE FROM {staging.AREA} WHERE query_id = %s AND batch_id <= %s"


class IncompleteBatchError(RuntimeError):
    """The staging area does not hold the rows the executors staged: the batch must be re-run."""


def load(cur: Cursor, query_id: str, batch_id: int, staged: Counts) -> None:
    """Move the staged batch into the (created) temp tables, checking it is complete."""
    for table, expected in (
        (staging.EVENTS, staged.events),
        (staging.DEAD_LETTERS, staged.dead_letters),
    ):
        cur.execute(table.unstage(), (query_id, batch_id))
        if cur.rowcount != expected:
            raise IncompleteBatchError(
                f"batch {batch_id} of query {query_id}: {staging.AREA} holds {cur.rowcount}"
                f" rows for {table.name}, the executors staged {expected}: the batch is refused"
                " and will be re-run"
            )


def release(cur: Cursor, query_id: str, batch_id: int) -> None:
    """Delete the query's staged batches up to `batch_id` (folded, or given up)."""
    cur.execute(RELEASE, (query_id, batch_id))
