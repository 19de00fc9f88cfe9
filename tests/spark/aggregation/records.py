"""Raw Kafka records for the job's production path (sink.batch_payloads), and what it stages
read back from the COPY text: table -> rows (column -> field, unescaped)."""

import json
import re
import uuid
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T  # noqa: N812 (PySpark idiom)

from onceflow import contract
from spark_jobs.aggregation import staging
from spark_jobs.aggregation.sink import batch_payloads

MAX = 4096
RAW = T.StructType(
    [
        T.StructField("key", T.BinaryType()),
        T.StructField("value", T.BinaryType()),
        T.StructField("topic", T.StringType()),
        T.StructField("partition", T.IntegerType()),
        T.StructField("offset", T.LongType()),
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
STATUS = {event.value: status.value for event, status in contract.STATUS_AFTER.items()}
UNESCAPE = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r"}
Record = tuple[Any, ...]


def event(event_type: str = "OrderPlaced", **changes: Any) -> dict[str, Any]:
    """A valid v1 event of contract section 4; `order=` updates its order's fields."""
    order = {
        "id": str(uuid.uuid4()),
        "customer_id": "c-42",
        "currency": "EUR",
        "status": STATUS.get(event_type, "PLACED"),
        "total_cents": 2600,
        "created_at": "2026-11-22T10:15:03.123456Z",
        "updated_at": "2026-11-22T10:15:03.123456Z",
        "items": [
            {"sku": "SKU-1", "quantity": 2, "unit_price_cents": 1250},
            {"sku": "SKU-2", "quantity": 1, "unit_price_cents": 100},
        ],
    }
    order.update(changes.pop("order", {}))
    e = {
        "event_id": str(uuid.uuid4()),
        "event_type": event_type,
        "schema_version": contract.SCHEMA_VERSION,
        "occurred_at": "2026-11-22T23:59:59.999999Z",
        "order": order,
    }
    e.update(changes)
    return e


def record(
    e: dict[str, Any] | None,
    *,
    key: bytes | None = None,
    value: bytes | None = None,
    headers: list[tuple[str, bytes]] | None = None,
) -> Record:
    """The Kafka record of `e` (key = order id, the connector's headers), or raw key/value."""
    if e is not None:
        value = json.dumps(e).encode()
        key = key if key is not None else e["order"]["id"].encode()
        if headers is None and "event_id" in e:
            headers = [("id", e["event_id"].encode()), ("eventType", e["event_type"].encode())]
    return key, value, "orders", 0, 0, headers or []


def _field(text: str) -> str | None:
    if text == "\\N":
        return None
    return re.sub(r"\\[\\tnr]", lambda m: UNESCAPE[m.group(0)], text)


def staged(spark: SparkSession, records: list[Record]) -> dict[str, list[dict[str, Any]]]:
    """What batch_payloads stages for `records` (offsets 0, 1, ...): table -> rows. Every line
    must have exactly its table's columns."""
    numbered = [(*r[:4], i, r[5]) for i, r in enumerate(records)]
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
