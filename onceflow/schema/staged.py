"""Schema `analytics`, the job's staging area: where executors write a micro-batch's parts.

UNLOGGED (no WAL: a crash-restart of Postgres empties them, which the fold detects by counting)
and keyed by (query id, batch id, part). Each holds its query's batches between staging and
their fold; rows of queries that no longer run are pruned by maintenance after
staged_retention (staged_at). The columns after `part` are exactly those of the job's temp
tables (spark_jobs/aggregation/staging.py; tests/unit/aggregation/test_staging.py compares them).
"""

from sqlalchemy import (
    BigInteger,
    Column,
    Date,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    Table,
    Text,
    Uuid,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

from onceflow.schema.metadata import TIMESTAMPTZ, metadata


def _staged(name: str, *columns: Column[object]) -> Table:
    table = Table(
        name,
        metadata,
        Column("query_id", Text, nullable=False),
        Column("batch_id", BigInteger, nullable=False),
        # The Spark partition the rows were rendered in: each is written (and replaced) whole.
        Column("part", Integer, nullable=False),
        *columns,
        Column("staged_at", TIMESTAMPTZ, nullable=False, server_default=text("now()")),
        schema="analytics",
        prefixes=["UNLOGGED"],
    )
    Index(f"{name}_by_batch", table.c.query_id, table.c.batch_id, table.c.part)
    return table


staged_events = _staged(
    "staged_events",
    Column("kafka_partition", Integer),
    Column("kafka_offset", BigInteger),
    Column("kafka_timestamp", TIMESTAMPTZ),
    Column("event_id", Uuid),
    Column("event_type", Text),
    Column("occurred_at", TIMESTAMPTZ),
    Column("day", Date),
    Column("order_id", Text),
    Column("customer_id", Text),
    Column("currency", Text),
    Column("status", Text),
    Column("status_rank", SmallInteger),
    Column("total_cents", BigInteger),
    Column("items", JSONB),
)

staged_dead_letters = _staged(
    "staged_dead_letters",
    Column("topic", Text),
    Column("kafka_partition", Integer),
    Column("kafka_offset", BigInteger),
    Column("key", LargeBinary),
    Column("value", LargeBinary),
    Column("error", Text),
)

STAGED_TABLES = (staged_events, staged_dead_letters)
