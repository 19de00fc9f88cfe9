"""One micro-batch as the staging area's rows (pure DataFrame -> DataFrame): raw Kafka rows in,
one row per record out, with the columns of aggregation.staged_records (staging.KEY, then
staging.COLUMNS).

A valid record fills the event's columns (staging.EVENTS) and leaves the dead letter's empty; a
dead letter fills its own (staging.DEAD_LETTERS: topic, key, value, error) and leaves the event's
empty, so nothing half-parsed reaches a typed column and the valid events' raw bytes are not
written twice. Both come from one pass over the batch: it is neither cached nor read twice.
"""

from collections.abc import Sequence
from functools import cache

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from spark_jobs.aggregation import parse, staging
from spark_jobs.aggregation import schema as S  # noqa: N812


def status_rank(status: Column) -> Column:
    """The status's rank (contract.STATUS_RANK): orders one order's events of the same instant."""
    rank = F.create_map(*[F.lit(x) for kv in S.STATUS_RANK.items() for x in kv])
    return rank[status].cast("short")


def counted_items(event_type: Column, items_json: Column) -> Column:
    """The items (`items_json`: the JSON array parse.annotated renders once per record) for
    OrderPlaced and OrderCancelled (the only events product_sales counts), null for the
    others."""
    return F.when(event_type.isin(S.PLACED, S.CANCELLED), items_json)


def staged_rows(raw: DataFrame, max_event_bytes: int, query_id: str, batch_id: int) -> DataFrame:
    """The batch's rows for the staging area, keyed by (query id, batch id)."""
    records = parse.annotated(parse.classify(raw, max_event_bytes))
    return records.select(
        F.lit(query_id).alias("query_id"),
        F.lit(batch_id).cast("long").alias("batch_id"),
        *_staged_columns(),
    )


@cache
def _staged_columns() -> tuple[Column, ...]:
    """staging.COLUMNS from the annotated records, built once per process (as parse builds
    its own): a valid record fills the event's, a dead letter its own."""
    valid = F.col("error").isNull()
    computed = {
        "status_rank": status_rank(F.col("status")),
        "items": counted_items(F.col("event_type"), F.col("items_json")),
    }

    def column(name: str) -> Column:
        value = computed.get(name, F.col(name))
        if name in staging.POSITION:
            return value
        if name in staging.EVENTS.names:
            return F.when(valid, value)
        return F.when(~valid, value)

    return tuple(column(name).alias(name) for name in staging.COLUMNS)


def raw_records(
    raw: DataFrame, positions: Sequence[tuple[int, int]]
) -> dict[tuple[int, int], tuple[bytes | None, bytes | None]]:
    """The key and value of the raw Kafka rows at `positions` (partition, offset), read again
    (the batch's offsets are fixed): the rare dead letters whose raw bytes were not staged."""
    wanted = raw.sparkSession.createDataFrame(list(positions), "partition int, offset long").hint(
        "broadcast"
    )
    rows = raw.join(wanted, ["partition", "offset"]).select("partition", "offset", "key", "value")
    return {
        (int(r["partition"]), int(r["offset"])): (_bytes(r["key"]), _bytes(r["value"]))
        for r in rows.collect()
    }


def _bytes(value: bytearray | None) -> bytes | None:
    """Spark's binary (a bytearray) as bytes."""
    return None if value is None else bytes(value)
