"""Raw Kafka records for the job's production path (render.staged_rows), and what it stages,
split by table: t_events / t_dead -> rows (column -> value as text; bytea as \\x hex), each row's
staging-area key checked, and the other table's columns checked empty."""

from datetime import UTC, datetime
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)
from pyspark.sql import types as T  # noqa: N812 (PySpark idiom)

from spark_jobs.aggregation import staging
from spark_jobs.aggregation.render import staged_rows
from tests.oracle.events import MAX, Record, event, record

__all__ = ["KAFKA_TS", "MAX", "QUERY_ID", "errors", "event", "raw_batch", "record", "staged"]

RAW = T.StructType(
    [
        T.StructField("key", T.BinaryType()),
        T.StructField("value", T.BinaryType()),
        T.StructField("topic", T.StringType()),
        T.StructField("partition", T.IntegerType()),
        T.StructField("offset", T.LongType()),
        T.StructField("timestamp", T.TimestampType()),
        T.StructField(
            "headers",
            T.ArrayType(
                T.StructType(
                    [T.StructField("key", T.StringType()), T.StructField("value", T.BinaryType())]
                )
            ),
        ),
    ]
)
# Every test record's Kafka timestamp (what the staged kafka_timestamp reads back as: KAFKA_TS).
KAFKA_TIMESTAMP = datetime(2026, 11, 23, 0, 0, 1, 250000, tzinfo=UTC)
KAFKA_TS = "2026-11-23 00:00:01.25"
# The staging area's key every test batch is rendered for.
QUERY_ID, BATCH_ID = "3f0c6f0e-unit", 7


def raw_batch(spark: SparkSession, records: list[Record], partitions: int = 1) -> DataFrame:
    """Raw Kafka rows of `records` (offsets 0, 1, ..., all at KAFKA_TIMESTAMP)."""
    numbered = [(*r[:4], i, KAFKA_TIMESTAMP, r[5]) for i, r in enumerate(records)]
    return spark.createDataFrame(numbered, RAW).repartition(partitions)


def _text(name: str, binary: bool) -> Column:
    column = F.col(name)
    text = F.concat(F.lit("\\x"), F.lower(F.hex(column))) if binary else column.cast("string")
    return text.alias(name)


def staged(
    spark: SparkSession, records: list[Record], limit: int = MAX
) -> dict[str, list[dict[str, Any]]]:
    """What staged_rows stages for `records` (values up to `limit` bytes): table -> rows. Every
    row carries the staging area's key, and nothing of the other table."""
    rows = staged_rows(raw_batch(spark, records), limit, QUERY_ID, BATCH_ID)
    binary = {f.name for f in rows.schema.fields if f.dataType == T.BinaryType()}
    texts = rows.select(*staging.KEY, *[_text(c, c in binary) for c in staging.COLUMNS])
    out: dict[str, list[dict[str, Any]]] = {"t_events": [], "t_dead": []}
    for row in texts.collect():
        assert (row["query_id"], row["batch_id"]) == (QUERY_ID, BATCH_ID), row
        table, other = (
            (staging.EVENTS, staging.DEAD_LETTERS)
            if row["error"] is None
            else (staging.DEAD_LETTERS, staging.EVENTS)
        )
        empty = set(other.names) - set(table.names)
        assert all(row[c] is None for c in empty), row
        out[table.name].append({c: row[c] for c in table.names})
    return out


def errors(spark: SparkSession, records: list[Record], limit: int = MAX) -> list[str | None]:
    """Each record's dead-letter reason, in offset order; None when it was staged as an event."""
    out = staged(spark, records, limit)
    reasons: dict[int, str | None] = {int(r["kafka_offset"]): None for r in out["t_events"]}
    reasons |= {int(r["kafka_offset"]): r["error"] for r in out["t_dead"]}
    assert sorted(reasons) == list(range(len(records))), "each record staged exactly once"
    return [reasons[i] for i in range(len(records))]
