"""One micro-batch as the staging area's rows (pure DataFrame -> DataFrame): raw Kafka rows in,
one row per record out, with the columns of analytics.staged_records (staging.KEY, then
staging.COLUMNS).

A valid record fills the event's columns (staging.EVENTS) and leaves the dead letter's empty; a
dead letter fills its own (staging.DEAD_LETTERS: topic, key, value, error) and leaves the event's
empty, so nothing half-parsed reaches a typed column and the valid events' raw bytes are not
written twice. Both come from one pass over the batch: it is neither cached nor read twice,
except for the rare records whose text is not canonical (parse.py): the first pass leaves them
to a second one over the batch, so that the exact path of phases 2-4 is only planned, optimized
and compiled for a batch that holds such a record (docs/benchmarks.md: what the checks cost).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)

from spark_jobs.aggregation import parse, staging
from spark_jobs.aggregation import schema as S  # noqa: N812

# first_pass's column: the record is left to second_pass (its text is not canonical).
DEFERRED = "deferred"


def status_rank(status: Column) -> Column:
    """The status's rank (contract.STATUS_RANK): orders one order's events of the same instant."""
    rank = F.create_map(*[F.lit(x) for kv in S.STATUS_RANK.items() for x in kv])
    return rank[status].cast("short")


def counted_items(event_type: Column, items: Column) -> Column:
    """The items as a JSON array for OrderPlaced and OrderCancelled (the only events
    product_sales counts), null for the others."""
    return F.when(event_type.isin(S.PLACED, S.CANCELLED), F.to_json(items))


def _rows(classified: DataFrame, query_id: str, batch_id: int, *extra: str) -> DataFrame:
    """The staging area's rows of `classified` records (parse.classify*), with `extra` columns."""
    records = parse.annotated(classified, *extra)
    valid = F.col("error").isNull()
    computed = {
        "status_rank": status_rank(F.col("status")),
        "items": counted_items(F.col("event_type"), F.col("items")),
    }

    def column(name: str) -> Column:
        value = computed.get(name, F.col(name))
        if name in staging.POSITION:
            return value
        if name in staging.EVENTS.names:
            return F.when(valid, value)
        return F.when(~valid, value)

    return records.select(
        F.lit(query_id).alias("query_id"),
        F.lit(batch_id).cast("long").alias("batch_id"),
        *[column(name).alias(name) for name in staging.COLUMNS],
        *extra,
    )


def staged_rows(raw: DataFrame, max_event_bytes: int, query_id: str, batch_id: int) -> DataFrame:
    """The batch's rows for the staging area, keyed by (query id, batch id), in one pass (the
    exact path in the plan): what `first_pass` and `second_pass` stage together."""
    return _rows(parse.classify(raw, max_event_bytes), query_id, batch_id)


def first_pass(raw: DataFrame, max_event_bytes: int, query_id: str, batch_id: int) -> DataFrame:
    """The rows of `staged_rows`, without the exact path in the plan: a record whose text is not
    canonical (parse.classify_canonical) is marked DEFERRED instead, its row meaningless, and
    left to `second_pass` (rare: such a batch is read twice). `kept` drops those rows."""
    classified = parse.classify_canonical(raw, max_event_bytes)
    return _rows(classified.withColumnRenamed("exact", DEFERRED), query_id, batch_id, DEFERRED)


def kept(first: DataFrame) -> DataFrame:
    """The rows `first_pass` rendered, without the DEFERRED ones."""
    return first.where(~F.col(DEFERRED)).drop(DEFERRED)


def second_pass(raw: DataFrame, max_event_bytes: int, query_id: str, batch_id: int) -> DataFrame:
    """The rows of the records `first_pass` deferred, as `staged_rows` renders them."""
    return _rows(parse.classify_exact(raw, max_event_bytes), query_id, batch_id)


@dataclass(frozen=True)
class Batch:
    """One micro-batch to stage: its raw Kafka rows and what renders them."""

    raw: DataFrame
    max_event_bytes: int
    query_id: str
    batch_id: int

    def rows(self) -> DataFrame:
        """staged_rows: every record in one pass."""
        return staged_rows(self.raw, self.max_event_bytes, self.query_id, self.batch_id)

    def first_pass(self) -> DataFrame:
        """first_pass: every record, the rare ones DEFERRED."""
        return first_pass(self.raw, self.max_event_bytes, self.query_id, self.batch_id)

    def second_pass(self) -> DataFrame:
        """second_pass: the records first_pass deferred."""
        return second_pass(self.raw, self.max_event_bytes, self.query_id, self.batch_id)


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
