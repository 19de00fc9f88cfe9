"""Typed events -> the rows one micro-batch stages in Postgres (pure DataFrame -> DataFrame).

The per-table aggregation happens in Postgres, inside the batch's transaction (merge.py),
because only Postgres knows which event ids were already counted by earlier batches: the
durable de-duplication must come before any sum. Spark's part is the expensive, parallel one
(parsing and validating JSON, flattening items); measured on 2 cores, aggregating in Spark
first cost ~2.5 s of fixed overhead per micro-batch (one shuffle stage per table) against
~0.2 s for the same GROUP BYs in Postgres over the staged rows.
"""

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from spark_jobs.aggregation import schema as S  # noqa: N812

EVENT_ROW_COLUMNS = (
    "kafka_partition",
    "kafka_offset",
    "event_id",
    "event_type",
    "occurred_at",
    "day",
    "order_id",
    "customer_id",
    "currency",
    "status",
    "status_rank",
    "total_cents",
)
ITEM_ROW_COLUMNS = ("kafka_partition", "kafka_offset", "sku", "quantity", "unit_price_cents")
# Columns that parse.py has validated to be numbers, UUIDs, enums, timestamps or identifiers of
# [A-Za-z0-9._:-]: their COPY text needs no escaping. order_id is only checked to equal the key,
# so it may hold anything and stays escaped.
EVENT_ROW_VERBATIM = tuple(c for c in EVENT_ROW_COLUMNS if c != "order_id")
ITEM_ROW_VERBATIM = ITEM_ROW_COLUMNS


def status_rank(status: Column) -> Column:
    """PLACED 0, PAID 1, SHIPPED/CANCELLED 2: orders one order's events of the same instant."""
    rank = F.create_map(*[F.lit(x) for kv in S.STATUS_RANK.items() for x in kv])
    return rank[status].cast("short")


def event_rows(events: DataFrame) -> DataFrame:
    """One row per valid record (EVENT_ROW_COLUMNS): the event without its items."""
    return events.select(
        *[c for c in EVENT_ROW_COLUMNS if c != "status_rank"],
        status_rank(F.col("status")).alias("status_rank"),
    ).select(*EVENT_ROW_COLUMNS)


def item_rows(events: DataFrame) -> DataFrame:
    """One row per item of OrderPlaced and OrderCancelled records (the only ones product_sales
    counts), keyed by the record's Kafka position."""
    return (
        events.where(F.col("event_type").isin(S.PLACED, S.CANCELLED))
        .select("kafka_partition", "kafka_offset", F.explode("items").alias("item"))
        .select(
            "kafka_partition",
            "kafka_offset",
            F.col("item.sku").alias("sku"),
            F.col("item.quantity").alias("quantity"),
            F.col("item.unit_price_cents").alias("unit_price_cents"),
        )
    )
