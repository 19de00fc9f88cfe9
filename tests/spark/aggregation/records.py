"""Raw Kafka records for the job's production path (sink.batch_payloads), and what it stages
read back from the COPY text: table -> rows (column -> field, unescaped)."""

import re
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T  # noqa: N812 (PySpark idiom)

from spark_jobs.aggregation import staging
from spark_jobs.aggregation.sink import batch_payloads
from tests.oracle.events import MAX, Record, event, record

__all__ = ["KAFKA_TS", "MAX", "errors", "event", "record", "staged"]

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
UNESCAPE = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r"}


def _field(text: str) -> str | None:
    if text == "\\N":
        return None
    return re.sub(r"\\[\\tnr]", lambda m: UNESCAPE[m.group(0)], text)


def staged(spark: SparkSession, records: list[Record]) -> dict[str, list[dict[str, Any]]]:
    """What batch_payloads stages for `records` (offsets 0, 1, ..., all at KAFKA_TIMESTAMP):
    table -> rows. Every line must have exactly its table's columns."""
    numbered = [(*r[:4], i, KAFKA_TIMESTAMP, r[5]) for i, r in enumerate(records)]
    raw: DataFrame = spark.createDataFrame(numbered, RAW)
    tables = {t.name: t for t in (staging.EVENTS, staging.DEAD_LETTERS)}
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in tables}
    for name, text in batch_payloads(raw, MAX).items():
        for line in text.removesuffix("\n").split("\n"):
            fields = line.split("\t")
            assert len(fields) == len(tables[name].names), line
            out[name].append(dict(zip(tables[name].names, map(_field, fields), strict=True)))
    return out


def errors(spark: SparkSession, records: list[Record]) -> list[str | None]:
    """Each record's dead-letter reason, in offset order; None when it was staged as an event."""
    out = staged(spark, records)
    reasons: dict[int, str | None] = {int(r["kafka_offset"]): None for r in out["t_events"]}
    reasons |= {int(r["kafka_offset"]): r["error"] for r in out["t_dead"]}
    assert sorted(reasons) == list(range(len(records))), "each record staged exactly once"
    return [reasons[i] for i in range(len(records))]
