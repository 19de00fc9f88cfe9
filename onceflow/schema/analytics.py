"""Schema `analytics`: what analysts query (contract section 5) and the job's bookkeeping.

`order_status_counts` is a view over order_state (migration 0002), not a table.
"""

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    Date,
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
    schema="analytics",
)

applied_events = Table(
    "applied_events",
    metadata,
    Column("event_id", Uuid, primary_key=True),
    schema="analytics",
)

# Every table the job writes, in the order a reset empties them.
JOB_TABLES = tuple(t for t in metadata.sorted_tables if t.schema == "analytics")
