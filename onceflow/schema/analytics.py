"""Schema `analytics`: what analysts query (contract section 5) and the job's bookkeeping.

`order_status_counts` is a view over order_state (migration 0002), not a table.
"""

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
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
from sqlalchemy.dialects.postgresql import INTERVAL, JSONB

from onceflow.schema.metadata import TIMESTAMPTZ, metadata
from onceflow.schema.staged import STAGED_TABLES

ZERO = text("0")


# The additive columns of each table (event counts and sums, all starting at 0).
DAILY_COUNTS = (
    "orders_placed",
    "orders_paid",
    "orders_shipped",
    "orders_cancelled",
    "placed_cents",
    "paid_cents",
    "cancelled_cents",
)
CUSTOMER_COUNTS = ("orders_placed", "placed_cents", "paid_cents", "cancelled_cents")
PRODUCT_COUNTS = ("units_placed", "placed_cents", "units_cancelled", "cancelled_cents")


def _counts(names: tuple[str, ...]) -> list[Column[int]]:
    return [Column(name, BigInteger, nullable=False, server_default=ZERO) for name in names]


daily_sales = Table(
    "daily_sales",
    metadata,
    Column("day", Date, primary_key=True),
    Column("currency", Text, primary_key=True),
    *_counts(DAILY_COUNTS),
    schema="analytics",
)

customer_sales = Table(
    "customer_sales",
    metadata,
    Column("customer_id", Text, primary_key=True),
    *_counts(CUSTOMER_COUNTS),
    Column("first_order_at", TIMESTAMPTZ),
    Column("last_order_at", TIMESTAMPTZ),
    schema="analytics",
)

product_sales = Table(
    "product_sales",
    metadata,
    Column("sku", Text, primary_key=True),
    *_counts(PRODUCT_COUNTS),
    schema="analytics",
)

# status_rank orders one order's events that share an occurred_at (contract.STATUS_RANK).
order_state = Table(
    "order_state",
    metadata,
    Column("order_id", Text, primary_key=True),
    Column(
        "status",
        Text,
        CheckConstraint("status IN ('PLACED', 'PAID', 'SHIPPED', 'CANCELLED')"),
        nullable=False,
    ),
    Column("status_rank", SmallInteger, nullable=False),
    Column("last_event_at", TIMESTAMPTZ, nullable=False),
    schema="analytics",
)

freshness = Table(
    "freshness",
    metadata,
    Column("stream", Text, primary_key=True),
    Column("last_event_at", TIMESTAMPTZ),
    Column("last_applied_at", TIMESTAMPTZ, nullable=False),
    *_counts(("events_applied",)),
    schema="analytics",
)

dead_letters = Table(
    "dead_letters",
    metadata,
    Column("topic", Text, primary_key=True),
    Column("kafka_partition", Integer, primary_key=True),
    Column("kafka_offset", BigInteger, primary_key=True),
    Column("key", LargeBinary),
    Column("value", LargeBinary),
    Column("error", Text, nullable=False),
    Column("received_at", TIMESTAMPTZ, nullable=False, server_default=text("now()")),
    # Set by `onceflow-ops dead-letters replay` (migration 0011): when, which event id, and the
    # batch of query `replay` that counted it (NULL: the id was already counted).
    Column("replayed_at", TIMESTAMPTZ),
    Column("replayed_event_id", Uuid),
    Column("replay_batch_id", BigInteger),
    schema="analytics",
)

applied_batches = Table(
    "applied_batches",
    metadata,
    Column("query_id", Text, primary_key=True),
    Column("batch_id", BigInteger, primary_key=True),
    Column("topic", Text, nullable=False),
    Column("offsets", JSONB, nullable=False),
    Column("records", BigInteger, nullable=False),
    Column("events_new", BigInteger, nullable=False),
    Column("duplicates", BigInteger, nullable=False),
    Column("dead_letters", BigInteger, nullable=False),
    Column("committed_at", TIMESTAMPTZ, nullable=False),
    *_counts(("late_events",)),
    schema="analytics",
)
Index("applied_batches_by_age", applied_batches.c.committed_at)

# The de-duplication set, partitioned by RANGE (occurred_at); partitions come and go through
# analytics.dedup_cover / dedup_forget (migrations/sql/analytics/dedup.sql) and are listed in
# dedup_partitions. Ids counted before migration 0005 sit in applied_events_legacy with
# occurred_at = -infinity. Each row also says where its event came from and which batch
# counted it (an order's journey: services/ops/journey.py).
applied_events = Table(
    "applied_events",
    metadata,
    Column("event_id", Uuid, primary_key=True),
    Column("occurred_at", TIMESTAMPTZ, primary_key=True),
    # The event's journey (migration 0009), written by the batch that counted it; null for
    # ids remembered before that migration.
    Column("order_id", Text),
    Column("event_type", Text),
    Column("kafka_partition", Integer),
    Column("kafka_offset", BigInteger),
    Column("kafka_timestamp", TIMESTAMPTZ),
    Column("query_id", Text),
    Column("batch_id", BigInteger),
    # The event's content fingerprint (spark_jobs/aggregation/parse.py, migration 0012): a copy
    # with the same id and another is a dead letter; null for ids remembered before it.
    Column("fingerprint", BigInteger),
    schema="analytics",
    postgresql_partition_by="RANGE (occurred_at)",
)
Index("applied_events_by_order", applied_events.c.order_id)

dedup_state = Table(
    "dedup_state",
    metadata,
    Column(
        "singleton",
        Boolean,
        CheckConstraint("singleton"),
        primary_key=True,
        server_default=text("true"),
    ),
    Column("width", INTERVAL, nullable=False),
    Column("forgotten_before", TIMESTAMPTZ, nullable=False),
    schema="analytics",
)

dedup_partitions = Table(
    "dedup_partitions",
    metadata,
    Column("name", Text, primary_key=True),
    Column("lower_bound", TIMESTAMPTZ, nullable=False),
    Column("upper_bound", TIMESTAMPTZ, nullable=False),
    schema="analytics",
)

# Events that occurred before the horizon (their ids may be forgotten): counted, and traced here.
late_events = Table(
    "late_events",
    metadata,
    Column("topic", Text, primary_key=True),
    Column("kafka_partition", Integer, primary_key=True),
    Column("kafka_offset", BigInteger, primary_key=True),
    Column("event_id", Uuid, nullable=False),
    Column("occurred_at", TIMESTAMPTZ, nullable=False),
    Column("counted_at", TIMESTAMPTZ, nullable=False, server_default=text("now()")),
    schema="analytics",
)
Index("late_events_by_age", late_events.c.counted_at)

# What a backfill --reset empties: every table the job fills (the de-duplication bookkeeping
# describes partitions, which stay; the staging area holds no result, only batches in flight).
JOB_TABLES = tuple(
    t
    for t in metadata.sorted_tables
    if t.schema == "analytics" and t not in (dedup_state, dedup_partitions, *STAGED_TABLES)
)
