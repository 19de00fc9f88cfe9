"""One micro-batch rendered by Spark (pure DataFrame -> DataFrame): raw Kafka rows in, COPY text
for the staging area out, one row per (staged table, Spark partition).

Each record renders either its event line (staging.EVENTS) or its dead-letter line
(staging.DEAD_LETTERS) in one pass, so the parsed batch is neither cached nor read twice; every
line carries the staging area's key (query id, batch id: literals from the driver; the part).
"""

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from spark_jobs.aggregation import copytext, parse, staging
from spark_jobs.aggregation import schema as S  # noqa: N812


def status_rank(status: Column) -> Column:
    """The status's rank (contract.STATUS_RANK): orders one order's events of the same instant."""
    rank = F.create_map(*[F.lit(x) for kv in S.STATUS_RANK.items() for x in kv])
    return rank[status].cast("short")


def counted_items(event_type: Column, items: Column) -> Column:
    """The items as a JSON array for OrderPlaced and OrderCancelled (the only events
    product_sales counts), null for the others."""
    return F.when(event_type.isin(S.PLACED, S.CANCELLED), F.to_json(items))


def event_rows(events: DataFrame, *keep: str) -> DataFrame:
    """One row per record (EVENTS' columns, then the `keep` columns): the event, with its
    counted items as JSON that Postgres expands (cheaper than one Spark row per item)."""
    computed = {
        "status_rank": status_rank(F.col("status")),
        "items": counted_items(F.col("event_type"), F.col("items")),
    }
    return events.select(
        *[computed[c].alias(c) if c in computed else F.col(c) for c in staging.EVENTS.names], *keep
    )


def batch_lines(raw: DataFrame, max_event_bytes: int) -> DataFrame:
    """(kind, line): each raw record's COPY line, kind naming its staged table."""
    rows = event_rows(
        parse.annotated(parse.classify(raw, max_event_bytes)), "topic", "key", "value", "error"
    )
    valid = F.col("error").isNull()
    return rows.select(
        F.when(valid, F.lit(staging.EVENTS.name))
        .otherwise(F.lit(staging.DEAD_LETTERS.name))
        .alias("kind"),
        F.when(valid, staging.EVENTS.line()).otherwise(staging.DEAD_LETTERS.line()).alias("line"),
    )


def batch_parts(raw: DataFrame, max_event_bytes: int, query_id: str, batch_id: int) -> DataFrame:
    """(kind, part, payload, rows): the batch's COPY text for the staging area, per staged table
    and Spark partition; staged tables without rows are absent."""
    return copytext.bundle(batch_lines(raw, max_event_bytes), query_id, str(batch_id))
