"""Per-table aggregations of typed events (pure DataFrame -> DataFrame).

Each function takes events with parse.EVENT_COLUMNS and returns the table's rows for exactly
those events. Applied to one micro-batch they give the deltas the sink adds to the tables;
applied to a whole history they give the tables themselves (the sink's merge is associative:
sums add, first/last take min/max, the latest order state wins by (occurred_at, rank)).
"""

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_jobs.aggregation import schema as S

DAILY_SALES_COLUMNS = (
    "day",
    "currency",
    "orders_placed",
    "orders_paid",
    "orders_shipped",
    "orders_cancelled",
    "placed_cents",
    "paid_cents",
    "cancelled_cents",
)
CUSTOMER_SALES_COLUMNS = (
    "customer_id",
    "orders_placed",
    "placed_cents",
    "paid_cents",
    "cancelled_cents",
    "first_order_at",
    "last_order_at",
)
PRODUCT_SALES_COLUMNS = (
    "sku",
    "units_placed",
    "placed_cents",
    "units_cancelled",
    "cancelled_cents",
)
ORDER_STATE_COLUMNS = ("order_id", "status", "status_rank", "last_event_at")


def _is(event_type: str) -> Column:
    return F.col("event_type") == F.lit(event_type)


def _count_of(event_type: str) -> Column:
    return F.sum(F.when(_is(event_type), 1).otherwise(0)).cast("long")


def _cents_of(event_type: str) -> Column:
    return F.sum(F.when(_is(event_type), F.col("total_cents")).otherwise(0)).cast("long")


def distinct_events(events: DataFrame) -> DataFrame:
    """One row per event_id (the same event produced twice on the topic counts once)."""
    return events.dropDuplicates(["event_id"])


def daily_sales(events: DataFrame) -> DataFrame:
    """Per (UTC day of occurred_at, currency): event counts and total_cents sums."""
    return events.groupBy("day", "currency").agg(
        _count_of(S.PLACED).alias("orders_placed"),
        _count_of(S.PAID).alias("orders_paid"),
        _count_of(S.SHIPPED).alias("orders_shipped"),
        _count_of(S.CANCELLED).alias("orders_cancelled"),
        _cents_of(S.PLACED).alias("placed_cents"),
        _cents_of(S.PAID).alias("paid_cents"),
        _cents_of(S.CANCELLED).alias("cancelled_cents"),
    )


def customer_sales(events: DataFrame) -> DataFrame:
    """Per customer: placed count, cents placed/paid/cancelled, first and last OrderPlaced."""
    placed_at = F.when(_is(S.PLACED), F.col("occurred_at"))
    return events.groupBy("customer_id").agg(
        _count_of(S.PLACED).alias("orders_placed"),
        _cents_of(S.PLACED).alias("placed_cents"),
        _cents_of(S.PAID).alias("paid_cents"),
        _cents_of(S.CANCELLED).alias("cancelled_cents"),
        F.min(placed_at).alias("first_order_at"),
        F.max(placed_at).alias("last_order_at"),
    )


def product_sales(events: DataFrame) -> DataFrame:
    """Per SKU: units and cents over the items of OrderPlaced and of OrderCancelled events."""
    lines = events.where(F.col("event_type").isin(S.PLACED, S.CANCELLED)).select(
        "event_type", F.explode("items").alias("item")
    )
    units = F.col("item.quantity")
    cents = F.col("item.quantity") * F.col("item.unit_price_cents")

    def total(value: Column, event_type: str) -> Column:
        return F.sum(F.when(_is(event_type), value).otherwise(0)).cast("long")

    return lines.groupBy(F.col("item.sku").alias("sku")).agg(
        total(units, S.PLACED).alias("units_placed"),
        total(cents, S.PLACED).alias("placed_cents"),
        total(units, S.CANCELLED).alias("units_cancelled"),
        total(cents, S.CANCELLED).alias("cancelled_cents"),
    )


def status_rank(status: Column) -> Column:
    """PLACED 0, PAID 1, SHIPPED/CANCELLED 2: breaks ties between events of one instant."""
    rank = F.create_map(*[F.lit(x) for kv in S.STATUS_RANK.items() for x in kv])
    return rank[status].cast("short")


def order_state(events: DataFrame) -> DataFrame:
    """Per order: the status after its latest event (by occurred_at, then lifecycle rank)."""
    latest = F.max(
        F.struct(
            F.col("occurred_at"), status_rank(F.col("status")).alias("rank"), F.col("status")
        )
    )
    return (
        events.groupBy("order_id")
        .agg(latest.alias("latest"))
        .select(
            "order_id",
            F.col("latest.status").alias("status"),
            F.col("latest.rank").alias("status_rank"),
            F.col("latest.occurred_at").alias("last_event_at"),
        )
    )


def order_status_counts(state: DataFrame) -> DataFrame:
    """Orders per current status, from order_state rows (what the view computes)."""
    return state.groupBy("status").agg(F.count(F.lit(1)).alias("orders"))


def freshness(events: DataFrame) -> DataFrame:
    """Per topic (the stream): how many events and the latest occurred_at among them."""
    return events.groupBy(F.col("topic").alias("stream")).agg(
        F.max("occurred_at").alias("last_event_at"),
        F.count(F.lit(1)).alias("events_applied"),
    )
