"""The fold's side of the staging area, inside the batch's transaction: the staged batch is
checked complete against what the executors reported, moved into the temp tables merge.py
folds, and released (with any older batch of the query, left by an attempt that failed).

The staging area is UNLOGGED: a crash-restart of Postgres empties it. A batch whose staged rows
differ from the executors' report is refused (IncompleteBatchError): its transaction rolls
back, the micro-batch fails, and Spark re-runs it from Kafka. A partial batch is never folded.
"""

from collections.abc import Mapping
from typing import Any

import psycopg

from spark_jobs.aggregation import staging

Cursor = psycopg.Cursor[Any]
COUNT = "SELECT part, count(*) FROM {area} WHERE query_id = %s AND batch_id = %s GROUP BY part"
RELEASE = "DELETE FROM {area} WHERE query_id = %s AND batch_id <= %s"


class IncompleteBatchError(RuntimeError):
    """The staging area does not hold the rows the executors staged: the batch must be re-run."""


def load(
    cur: Cursor, query_id: str, batch_id: int, reported: Mapping[tuple[str, int], int]
) -> None:
    """Move the staged batch into the (created) temp tables, checking every part is complete;
    `reported`: (kind, part) -> rows, what stage.stage returned."""
    for table in staging.BY_KIND.values():
        expected = {part: rows for (kind, part), rows in reported.items() if kind == table.name}
        cur.execute(COUNT.format(area=table.area), (query_id, batch_id))
        found: dict[object, int] = {int(part): int(rows) for part, rows in cur.fetchall()}
        if found == expected:
            cur.execute(table.unstage(), (query_id, batch_id))
            if cur.rowcount == sum(expected.values()):
                continue
            found = {"moved": cur.rowcount}  # changed between the count and the move
        raise IncompleteBatchError(
            f"batch {batch_id} of query {query_id}: {table.area} holds {found} rows per part,"
            f" the executors staged {expected}: the batch is refused and will be re-run"
        )


def release(cur: Cursor, query_id: str, batch_id: int) -> None:
    """Delete the query's staged batches up to `batch_id` (folded, or given up)."""
    for table in staging.BY_KIND.values():
        cur.execute(RELEASE.format(area=table.area), (query_id, batch_id))
