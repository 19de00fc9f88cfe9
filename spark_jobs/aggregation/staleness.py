"""What the AggregationStale alert reads, from stores that outlive the job's process: whether
input waits (the query's checkpoint) and when a batch last committed (the ledger).

Spark writes `offsets/N` when it plans batch N (its input is on Kafka, waiting) and
`commits/N` once the sink returned for it; a checkpoint whose offset log is ahead of its commit
log therefore has a batch planned and not done, however many times the job restarts on it.
"""

import os
from pathlib import Path

import psycopg

from spark_jobs.aggregation.sink import query_id_of

LAST_COMMIT = (
    "SELECT extract(epoch FROM max(committed_at))::float8"
    " FROM aggregation.applied_batches WHERE query_id = %s"
)


def _newest(log: Path) -> int:
    """The highest batch id of a Spark metadata log (offsets/ or commits/); -1 if none."""
    try:
        names = os.listdir(log)
    except FileNotFoundError:
        return -1
    return max((int(name) for name in names if name.isdigit()), default=-1)


def batch_pending(checkpoint: Path) -> bool:
    """True while Spark planned a batch that is not committed: its input is waiting."""
    return _newest(checkpoint / "offsets") > _newest(checkpoint / "commits")


def created_at(checkpoint: Path) -> float | None:
    """When the query was created (its checkpoint's metadata file); None before that."""
    try:
        return (checkpoint / "metadata").stat().st_mtime
    except FileNotFoundError:
        return None


def last_commit(dsn: str, checkpoint: Path) -> float | None:
    """Epoch seconds of the query's newest batch in the ledger (None: it committed none, or
    the query is not created yet). Pruning keeps each query's newest batch: this survives it."""
    try:
        query_id = query_id_of(checkpoint)
    except FileNotFoundError:
        return None
    with psycopg.connect(dsn, connect_timeout=10) as conn:
        row = conn.execute(LAST_COMMIT, (query_id,)).fetchone()
    return None if row is None or row[0] is None else float(row[0])
