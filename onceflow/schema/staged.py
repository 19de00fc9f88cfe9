"""Schema `aggregation`, the job's staging area: where the executors write a micro-batch.

UNLOGGED (no WAL: a crash-restart of Postgres empties it, which the fold detects by counting)
and keyed by (query id, batch id). It holds a query's batches between staging and their fold;
rows of queries that no longer run are pruned by maintenance after staged_retention
(staged_at). One row per Kafka record: the columns of the job's two temp tables, once each
(spark_jobs/aggregation/staging.py; tests/unit/aggregation/test_staging.py compares them).
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

from onceflow.schema.metadata import BOOKKEEPING_SCHEMA, TIMESTAMPTZ, metadata

staged_records = Table(
    "staged_records",
    metadata,
    Column("query_id", Text, nullable=False),
    Column("batch_id", BigInteger, nullable=False),
    Column("kafka_partition", Integer, nullable=False),
    Column("kafka_offset", BigInteger, nullable=False),
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
    # The event's content fingerprint (spark_jobs/aggregation/parse.py; migration 0012).
    Column("fingerprint", BigInteger),
    Column("topic", Text),
    Column("key", LargeBinary),
    Column("value", LargeBinary),
    # NULL: a valid event; else why the record is a dead letter.
    Column("error", Text),
    Column("staged_at", TIMESTAMPTZ, nullable=False, server_default=text("now()")),
    schema=BOOKKEEPING_SCHEMA,
    prefixes=["UNLOGGED"],
)
Index(
    "staged_records_by_batch",
    staged_records.c.query_id,
    staged_records.c.batch_id,
    staged_records.c.kafka_partition,
    staged_records.c.kafka_offset,
)

STAGED_TABLES = (staged_records,)
