"""How far the aggregation job has come: the last micro-batch it committed (its ledger)."""

import psycopg

from onceflow.settings import Settings


def last_batch(settings: Settings) -> int:
    """The highest batch id in aggregation.applied_batches (-1 before any); -1 too when
    Postgres does not answer within 5 s."""
    try:
        with psycopg.connect(settings.dsn("owner"), autocommit=True, connect_timeout=5) as conn:
            row = conn.execute(
                "SELECT coalesce(max(batch_id), -1) FROM aggregation.applied_batches"
            ).fetchone()
    except psycopg.OperationalError:
        return -1
    return -1 if row is None else int(row[0])
