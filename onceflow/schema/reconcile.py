"""Schema `reconcile`: what the reconciler (services/reconcile, docs/operations.md
"Reconciliation") read from the topic and found. Neither analysts nor the job see it.

topic_positions says how far each partition was read (each record is read once, across runs);
topic_events holds the valid events read, one row per event id, for as long as their day is
kept; day_results and differences are the last report of each day checked; runs one row per run.
"""

from sqlalchemy import (
    ARRAY,
    BigInteger,
    Column,
    Date,
    Identity,
    Index,
    Integer,
    Table,
    Text,
    Uuid,
)

from onceflow.schema.metadata import TIMESTAMPTZ, metadata

SCHEMA = "reconcile"

topic_positions = Table(
    "topic_positions",
    metadata,
    Column("topic", Text, primary_key=True),
    Column("kafka_partition", Integer, primary_key=True),
    # The next offset to read (the consumer's position after the last read).
    Column("next_offset", BigInteger, nullable=False),
    # The offset of the last record read (NULL: none yet): the job must have applied it before
    # a day is compared with the analytics tables.
    Column("last_record_offset", BigInteger),
    # The partition's events are all read from this instant on (-infinity when it was read from
    # its first offset; else the first record's timestamp: older records had been deleted).
    Column("complete_from", TIMESTAMPTZ, nullable=False),
    Column("read_at", TIMESTAMPTZ, nullable=False),
    schema=SCHEMA,
)

topic_events = Table(
    "topic_events",
    metadata,
    Column("event_id", Uuid, primary_key=True),
    Column("order_id", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("occurred_at", TIMESTAMPTZ, nullable=False),
    Column("day", Date, nullable=False),
    Column("currency", Text, nullable=False),
    Column("total_cents", BigInteger, nullable=False),
    Column("kafka_partition", Integer, nullable=False),
    Column("kafka_offset", BigInteger, nullable=False),
    # How many records carried this event id (more than 1: a duplicate on the topic).
    Column("copies", Integer, nullable=False),
    schema=SCHEMA,
)
Index("topic_events_by_day", topic_events.c.day, topic_events.c.currency)
Index("topic_events_by_order", topic_events.c.order_id)

runs = Table(
    "runs",
    metadata,
    Column("run_id", BigInteger, Identity(), primary_key=True),
    Column("started_at", TIMESTAMPTZ, nullable=False),
    Column("finished_at", TIMESTAMPTZ, nullable=False),
    Column("first_day", Date),
    Column("last_day", Date),
    Column("days_checked", Integer, nullable=False),
    Column("records_read", BigInteger, nullable=False),
    Column("differences", Integer, nullable=False),
    # Why days were not compared, or not with the analytics tables (NULL: all were).
    Column("note", Text),
    schema=SCHEMA,
)
Index("runs_by_age", runs.c.finished_at)

day_results = Table(
    "day_results",
    metadata,
    Column("day", Date, primary_key=True),
    Column("checked_at", TIMESTAMPTZ, nullable=False),
    Column("run_id", BigInteger, nullable=False),
    Column("differences", Integer, nullable=False),
    schema=SCHEMA,
)

differences = Table(
    "differences",
    metadata,
    Column("day", Date, primary_key=True),
    Column("currency", Text, primary_key=True),
    Column("event_type", Text, primary_key=True),
    # events (count), cents (sum of total_cents), refunded_cents (OrderCancelled of paid orders),
    # latest (orders whose latest event is of this type on this day).
    Column("measure", Text, primary_key=True),
    # Each source's value (NULL: that source does not say, or was not compared).
    Column("orders_value", BigInteger),
    Column("topic_value", BigInteger),
    Column("analytics_value", BigInteger),
    Column("order_ids", ARRAY(Text), nullable=False),
    Column("orders_involved", Integer, nullable=False),
    schema=SCHEMA,
)
