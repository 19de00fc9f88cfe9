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
    "items",
)
# Columns that parse.py has validated to be numbers, UUIDs, enums, timestamps or identifiers of
# [A-Za-z0-9._:-] (items: JSON of such values): their COPY text needs no escaping. order_id is
# only checked to equal the key, so it may hold anything and stays escaped.
EVENT_ROW_VERBATIM = tuple(c for c in EVENT_ROW_COLUMNS if c != "order_id")


def status_rank(status: Column) -> Column:
    """PLACED 0, PAID 1, SHIPPED/CANCELLED 2: orders one order's events of the same instant."""
    rank = F.create_map(*[F.lit(x) for kv in S.STATUS_RANK.items() for x in kv])
    return rank[status].cast("short")


def counted_items(event_type: Column, items: Column) -> Column:
    """The items as a JSON array for OrderPlaced and OrderCancelled (the only events
    product_sales counts), null for the others."""
    return F.when(event_type.isin(S.PLACED, S.CANCELLED), F.to_json(items))


def event_rows(events: DataFrame, *keep: str) -> DataFrame:
    """One row per record (EVENT_ROW_COLUMNS, then the `keep` columns): the event, with its
    counted items as JSON that Postgres expands (cheaper than one Spark row per item)."""
    computed = {
        "status_rank": status_rank(F.col("status")),
        "items": counted_items(F.col("event_type"), F.col("items")),
    }
    return events.select(
        *[computed[c].alias(c) if c in computed else F.col(c) for c in EVENT_ROW_COLUMNS], *keep
    )
