"""Schema `analytics`: what analysts query (contract section 5); schema `aggregation`: the job's
bookkeeping (ledger, de-duplication set and its partitions, late events, each order's latest
status), which the analyst role cannot see (no USAGE; migration 0018 moved it out of analytics).

`order_status_counts` is a view over order_state (migration 0002), not a table. Every reporting
relation and column carries its COMMENT here (the view's in VIEW_COMMENTS); migrations/comments.py
sets them in the database and `alembic check` compares the tables'.
"""

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
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

from onceflow.schema.metadata import BOOKKEEPING_SCHEMA, REPORTING_SCHEMA, TIMESTAMPTZ, metadata
from onceflow.schema.staged import STAGED_TABLES

ZERO = text("0")


# The additive columns of each table (event counts and sums, all starting at 0), each with what
# it counts (its COMMENT). daily_sales.net_paid_cents is computed from two of them.
DAILY_COUNTED: dict[str, str | None] = {
    "orders_placed": "Number of OrderPlaced events on this day in this currency.",
    "orders_paid": "Number of OrderPaid events on this day in this currency.",
    "orders_shipped": "Number of OrderShipped events on this day in this currency.",
    "orders_cancelled": "Number of OrderCancelled events on this day in this currency.",
    "placed_cents": "Sum of the order's total_cents over this day's OrderPlaced events.",
    "paid_cents": "Sum of the order's total_cents over this day's OrderPaid events.",
    "shipped_cents": "Sum of the order's total_cents over this day's OrderShipped events.",
    "cancelled_cents": "Sum of the order's total_cents over this day's OrderCancelled events.",
    "refunded_cents": (
        "Sum of the order's total_cents over this day's OrderCancelled events of orders that"
        " had been paid (an OrderPaid of the order was counted)."
    ),
}
CUSTOMER_COUNTED: dict[str, str | None] = {
    "orders_placed": "Number of the customer's OrderPlaced events in this currency.",
    "placed_cents": "Sum of total_cents over the customer's OrderPlaced events.",
    "paid_cents": "Sum of total_cents over the customer's OrderPaid events.",
    "cancelled_cents": "Sum of total_cents over the customer's OrderCancelled events.",
    "refunded_cents": (
        "Sum of total_cents over the customer's OrderCancelled events of orders that had been paid."
    ),
}
PRODUCT_COUNTED: dict[str, str | None] = {
    "units_placed": "Sum of quantity over the SKU's items of OrderPlaced events.",
    "placed_cents": (
        "Sum of quantity x unit_price_cents over the SKU's items of OrderPlaced events."
    ),
    "units_cancelled": "Sum of quantity over the SKU's items of OrderCancelled events.",
    "cancelled_cents": (
        "Sum of quantity x unit_price_cents over the SKU's items of OrderCancelled events."
    ),
}
DAILY_COUNTS = tuple(DAILY_COUNTED)
CUSTOMER_COUNTS = tuple(CUSTOMER_COUNTED)
PRODUCT_COUNTS = tuple(PRODUCT_COUNTED)
NET_PAID = "paid_cents - refunded_cents"

DAY = "UTC calendar day of the events' occurred_at."
CURRENCY = "ISO 4217 code of the orders' currency: amounts are minor units of it, never mixed."
SKU = "The item's SKU."


def _counts(counted: dict[str, str | None]) -> list[Column[int]]:
    return [
        Column(name, BigInteger, nullable=False, server_default=ZERO, comment=comment)
        for name, comment in counted.items()
    ]


daily_sales = Table(
    "daily_sales",
    metadata,
    Column("day", Date, primary_key=True, comment=DAY),
    Column("currency", Text, primary_key=True, comment=CURRENCY),
    *_counts(DAILY_COUNTED),
    Column(
        "net_paid_cents",
        BigInteger,
        Computed(NET_PAID, persisted=True),
        comment="paid_cents - refunded_cents: what was paid this day, less this day's refunds.",
    ),
    schema=REPORTING_SCHEMA,
    comment="Order events per UTC day and currency: counts and sums of the orders' totals.",
)

customer_sales = Table(
    "customer_sales",
    metadata,
    Column("customer_id", Text, primary_key=True, comment="The orders' customer_id."),
    Column("currency", Text, primary_key=True, comment=CURRENCY),
    *_counts(CUSTOMER_COUNTED),
    Column(
        "first_order_at",
        TIMESTAMPTZ,
        comment="Earliest occurred_at of the customer's OrderPlaced events in this currency.",
    ),
    Column(
        "last_order_at",
        TIMESTAMPTZ,
        comment="Latest occurred_at of the customer's OrderPlaced events in this currency.",
    ),
    schema=REPORTING_SCHEMA,
    comment="Order events per customer and currency, over all days.",
)

product_sales = Table(
    "product_sales",
    metadata,
    Column("sku", Text, primary_key=True, comment=SKU),
    Column("currency", Text, primary_key=True, comment=CURRENCY),
    *_counts(PRODUCT_COUNTED),
    schema=REPORTING_SCHEMA,
    comment="Items of OrderPlaced and OrderCancelled events per SKU and currency, over all days.",
)

daily_product_sales = Table(
    "daily_product_sales",
    metadata,
    Column("day", Date, primary_key=True, comment=DAY),
    Column("sku", Text, primary_key=True, comment=SKU),
    Column("currency", Text, primary_key=True, comment=CURRENCY),
    *_counts(PRODUCT_COUNTED),
    schema=REPORTING_SCHEMA,
    comment="Items of OrderPlaced and OrderCancelled events per UTC day, SKU and currency.",
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
    # Whether an OrderPaid of the order was counted, and the occurred_at of its OrderCancelled
    # (migration 0015): a refund is counted once both are known, in whatever order they come
    # (spark_jobs/aggregation/sql/refunds.sql).
    Column("paid", Boolean, nullable=False, server_default=text("false")),
    Column("cancelled_at", TIMESTAMPTZ),
    schema=BOOKKEEPING_SCHEMA,
)

freshness = Table(
    "freshness",
    metadata,
    Column("stream", Text, primary_key=True, comment="The Kafka topic read."),
    Column("last_event_at", TIMESTAMPTZ, comment="Greatest occurred_at among the counted events."),
    Column(
        "last_applied_at",
        TIMESTAMPTZ,
        nullable=False,
        comment="When the job last committed a micro-batch of this stream (database clock).",
    ),
    *_counts(
        {"events_applied": "Number of distinct events counted (no duplicate, no dead letter)."}
    ),
    schema=REPORTING_SCHEMA,
    comment="How far the tables are: the newest event counted and when the job last applied.",
)

dead_letters = Table(
    "dead_letters",
    metadata,
    Column("topic", Text, primary_key=True, comment="The Kafka topic of the record."),
    Column("kafka_partition", Integer, primary_key=True, comment="The record's partition."),
    Column("kafka_offset", BigInteger, primary_key=True, comment="The record's offset."),
    Column("key", LargeBinary, comment="The record's raw key."),
    Column("value", LargeBinary, comment="The record's raw value."),
    Column("error", Text, nullable=False, comment="Why the record is not a counted event."),
    Column(
        "received_at",
        TIMESTAMPTZ,
        nullable=False,
        server_default=text("now()"),
        comment="When the job recorded it.",
    ),
    # Set by `onceflow-ops dead-letters replay` (migration 0011): when, which event id, and the
    # batch of query `replay` that counted it (NULL: the id was already counted).
    Column("replayed_at", TIMESTAMPTZ, comment="When onceflow-ops replayed it (NULL: never)."),
    Column("replayed_event_id", Uuid, comment="The event id its replay carried."),
    Column(
        "replay_batch_id",
        BigInteger,
        comment="The ledger batch of query 'replay' that counted it (NULL: already counted).",
    ),
    schema=REPORTING_SCHEMA,
    comment="Records that are not a valid v1 event (contract 4c), each once; counted nowhere.",
)

# The reporting view (migration 0002), which metadata cannot hold: its comments (relation, then
# each column), set from here like the tables' (migrations/comments.py).
ORDER_STATUS_COUNTS = f"{REPORTING_SCHEMA}.order_status_counts"
VIEW_COMMENTS: dict[str, tuple[str | None, dict[str, str | None]]] = {
    ORDER_STATUS_COUNTS: (
        "How many orders are in each status now, by each order's latest counted event.",
        {
            "status": "An order status: PLACED, PAID, SHIPPED or CANCELLED (all four listed).",
            "orders": "Number of orders whose latest counted event leaves them in this status.",
        },
    )
}

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
    *_counts({"late_events": None}),
    schema=BOOKKEEPING_SCHEMA,
)
Index("applied_batches_by_age", applied_batches.c.committed_at)

# The de-duplication set, partitioned by RANGE (occurred_at); partitions come and go through
# aggregation.dedup_cover / dedup_forget (migrations/sql/aggregation/dedup.sql) and are listed in
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
    schema=BOOKKEEPING_SCHEMA,
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
    schema=BOOKKEEPING_SCHEMA,
)

dedup_partitions = Table(
    "dedup_partitions",
    metadata,
    Column("name", Text, primary_key=True),
    Column("lower_bound", TIMESTAMPTZ, nullable=False),
    Column("upper_bound", TIMESTAMPTZ, nullable=False),
    schema=BOOKKEEPING_SCHEMA,
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
    schema=BOOKKEEPING_SCHEMA,
)
Index("late_events_by_age", late_events.c.counted_at)

# What analysts query (contract section 5): every relation and column has a COMMENT.
REPORTING_TABLES = (
    daily_sales,
    customer_sales,
    product_sales,
    daily_product_sales,
    freshness,
    dead_letters,
)
REPORTING = (*(t.fullname for t in REPORTING_TABLES), *VIEW_COMMENTS)
# The job's bookkeeping (schema aggregation; the staging area included): no analyst sees it.
BOOKKEEPING = tuple(t.fullname for t in metadata.sorted_tables if t.schema == BOOKKEEPING_SCHEMA)

# What a backfill --reset empties: every table the job fills (the de-duplication bookkeeping
# describes partitions, which stay; the staging area holds no result, only batches in flight).
JOB_TABLES = tuple(
    t
    for t in metadata.sorted_tables
    if t.schema in (REPORTING_SCHEMA, BOOKKEEPING_SCHEMA)
    and t not in (dedup_state, dedup_partitions, *STAGED_TABLES)
)
