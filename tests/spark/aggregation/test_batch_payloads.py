"""The job's production path, sink.batch_payloads (parse.py, staging.py, copytext.py), on a
local SparkSession: raw Kafka rows in, the COPY text staged in Postgres out (no Kafka, no
Postgres)."""

import json
import re
import uuid
from typing import Any

import orjson
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 (PySpark idiom)
from pyspark.sql import types as T  # noqa: N812 (PySpark idiom)

from spark_jobs.aggregation import copytext, parse, staging
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


def event(event_type: str = "OrderPlaced", **changes: Any) -> dict[str, Any]:
    status = {
        "OrderPlaced": "PLACED",
        "OrderPaid": "PAID",
        "OrderShipped": "SHIPPED",
        "OrderCancelled": "CANCELLED",
    }.get(event_type, "PLACED")
    order = {
        "id": str(uuid.uuid4()),
        "customer_id": "c-42",
        "currency": "EUR",
        "status": status,
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
        "schema_version": 1,
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
) -> tuple[Any, ...]:
    if e is not None:
        value = json.dumps(e).encode()
        key = key if key is not None else e["order"]["id"].encode()
        if headers is None and "event_id" in e:
            headers = [("id", e["event_id"].encode()), ("eventType", e["event_type"].encode())]
    return key, value, "orders", 0, 0, headers or []


def raw(spark: SparkSession, records: list[tuple[Any, ...]]) -> DataFrame:
    numbered = [(*r[:4], i, r[5]) for i, r in enumerate(records)]
    return spark.createDataFrame(numbered, RAW)


UNESCAPE = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r"}


def _field(text: str) -> str | None:
    if text == "\\N":
        return None
    return re.sub(r"\\[\\tnr]", lambda m: UNESCAPE[m.group(0)], text)


def staged(spark: SparkSession, records: list[tuple[Any, ...]]) -> dict[str, list[dict[str, Any]]]:
    """What batch_payloads stages, read back: table -> rows (column -> COPY field, unescaped)."""
    tables = {t.name: t for t in (staging.EVENTS, staging.DEAD_LETTERS)}
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in tables}
    for name, text in batch_payloads(raw(spark, records), MAX).items():
        for line in text.removesuffix("\n").split("\n"):
            fields = line.split("\t")
            assert len(fields) == len(tables[name].names), line
            out[name].append(dict(zip(tables[name].names, map(_field, fields), strict=True)))
    return out


def errors(spark: SparkSession, records: list[tuple[Any, ...]]) -> list[str | None]:
    rows = parse.classify(raw(spark, records), MAX).orderBy("kafka_offset").collect()
    return [r["error"] for r in rows]


def test_a_valid_event_is_staged_typed(spark: SparkSession) -> None:
    e = event()
    out = staged(spark, [record(e)])
    assert out["t_dead"] == []
    (row,) = out["t_events"]
    assert row["event_id"] == e["event_id"]
    assert row["occurred_at"] == "2026-11-22 23:59:59.999999"  # UTC, read by a UTC session
    assert row["day"] == "2026-11-22"  # the UTC day
    assert row["total_cents"] == "2600"
    assert [i["sku"] for i in orjson.loads(row["items"])] == ["SKU-1", "SKU-2"]


def test_offsets_in_other_zones_count_on_their_utc_day(spark: SparkSession) -> None:
    e = event(occurred_at="2026-11-23T00:30:00+01:00")
    (row,) = staged(spark, [record(e)])["t_events"]
    assert row["day"] == "2026-11-22"


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: record(None, key=b"k", value=b"nope"), "value is not JSON"),
        (lambda: record(None, key=b"k", value=b"[1, 2]"), "value is not a JSON object"),
        (
            lambda: record(None, key=b"k", value=json.dumps(json.dumps(event())).encode()),
            "value is not a JSON object",
        ),
        (lambda: record(None, key=b"k", value=b"\xff\xfe"), "value is not UTF-8 text"),
        (lambda: record(None, key=b"k", value=None), "empty value (tombstone)"),
        (
            lambda: record(None, key=b"k", value=b"{" + b" " * MAX + b"}"),
            "oversized: 4098 bytes > 4096",
        ),
        (lambda: record(event(schema_version=2)), "unsupported schema_version 2"),
        (
            lambda: record(event(schema_version="1")),
            "wrong schema: a field has the wrong JSON type",
        ),
        (lambda: record(event(event_type="OrderLost")), "unknown event_type OrderLost"),
        (
            lambda: record({k: v for k, v in event().items() if k != "event_id"}),
            "missing field event_id",
        ),
        (lambda: record(event(order={"customer_id": None})), "missing field order.customer_id"),
        (lambda: record(event(event_id="not-a-uuid")), "event_id is not a UUID"),
        (lambda: record(event(occurred_at="yesterday")), "occurred_at is not an ISO 8601 time"),
        (lambda: record(event(order={"currency": "eur"})), "invalid order.currency"),
        (
            lambda: record(event("OrderPaid", order={"status": "PLACED"})),
            "order.status does not match event_type",
        ),
        (
            lambda: record(event(order={"items": [], "total_cents": 0})),
            "order.items must have 1..100 items",
        ),
        (
            lambda: record(
                event(
                    order={
                        "items": [{"sku": "S", "quantity": 0, "unit_price_cents": 1}],
                        "total_cents": 0,
                    }
                )
            ),
            "order.items[].quantity outside 1..10000",
        ),
        (
            lambda: record(event(order={"total_cents": 1})),
            "order.total_cents is not the sum of its items",
        ),
        (
            lambda: record(event(order={"total_cents": 2.5})),
            "wrong schema: a field has the wrong JSON type",
        ),
        (lambda: record(event(), key=b"someone-else"), "key does not match order.id"),
        (lambda: record(event(), headers=[("id", b"x")]), "header id does not match event_id"),
        (
            lambda: record(event(), headers=[("eventType", b"OrderPaid")]),
            "header eventType does not match event_type",
        ),
    ],
)
def test_bad_records_become_dead_letters_with_a_reason(
    spark: SparkSession, make: Any, reason: str
) -> None:
    assert errors(spark, [record(event()), make()]) == [None, reason]


def test_dead_letters_keep_the_raw_record(spark: SparkSession) -> None:
    out = staged(spark, [record(None, key=b"\x00k", value=b"\x01\x02")])
    (row,) = out["t_dead"]
    assert (row["key"], row["value"], row["kafka_offset"]) == ("\\x006b", "\\x0102", "0")
    assert row["error"] == "value is not JSON"
    assert out["t_events"] == []


def test_event_rows_carry_the_counted_items(spark: SparkSession) -> None:
    placed, paid = event(), event("OrderPaid")
    cancelled = event("OrderCancelled")
    out = staged(spark, [record(x) for x in (placed, paid, cancelled)])
    rows = {r["event_type"]: r for r in out["t_events"]}
    assert {k: r["status_rank"] for k, r in rows.items()} == {
        "OrderPlaced": "0",
        "OrderPaid": "1",
        "OrderCancelled": "2",
    }
    # Items of OrderPlaced and OrderCancelled only (product_sales counts nothing else).
    items = {k: r["items"] and orjson.loads(r["items"]) for k, r in rows.items()}
    assert items["OrderPaid"] is None
    assert items["OrderPlaced"] == items["OrderCancelled"] == placed["order"]["items"]


def test_copy_text_escapes_and_bundles(spark: SparkSession) -> None:
    df = spark.createDataFrame([("a\tb\\c\nd", None, b"\x00\xff")], "s string, n long, b binary")
    lines = df.select(copytext.line(["s", "n", "b"], bytea=["b"]).alias("line"))
    assert lines.collect()[0]["line"] == "a\\tb\\\\c\\nd\t\\N\t\\\\x00ff"
    (row,) = copytext.bundle(lines.select(F.lit("x").alias("kind"), "line")).collect()
    assert (row["kind"], row["rows"]) == ("x", 1)
    both = lines.select(F.explode(F.array(F.lit("x"), F.lit("y"))).alias("kind"), "line")
    assert copytext.payloads(copytext.bundle(both)) == {
        "x": "a\\tb\\\\c\\nd\t\\N\t\\\\x00ff\n",
        "y": "a\\tb\\\\c\\nd\t\\N\t\\\\x00ff\n",
    }


@pytest.mark.parametrize(
    ("order", "reason"),
    [
        ({"customer_id": "c-42\n"}, "invalid order.customer_id"),
        (
            {"items": [{"sku": "SKU-1\n", "quantity": 1, "unit_price_cents": 1}], "total_cents": 1},
            "invalid order.items[].sku",
        ),
        (
            {
                "items": [
                    {"sku": "A", "quantity": 1, "unit_price_cents": 1},
                    {"sku": "", "quantity": 1, "unit_price_cents": 1},
                ],
                "total_cents": 2,
            },
            "invalid order.items[].sku",
        ),
        (
            {"items": [{"sku": "A", "quantity": 1}], "total_cents": 0},
            "order.items[] has a missing sku, quantity or unit_price_cents",
        ),
        (
            {"items": [{"sku": "A", "quantity": 1, "unit_price_cents": -1}], "total_cents": -1},
            "order.items[].unit_price_cents outside 0..100000000",
        ),
    ],
)
def test_item_and_name_checks_are_anchored(
    spark: SparkSession, order: dict[str, Any], reason: str
) -> None:
    assert errors(spark, [record(event(order=order))]) == [reason]


def test_verbatim_columns_skip_escaping_but_keep_nulls(spark: SparkSession) -> None:
    df = spark.createDataFrame([("a\tb", "x\ty", None)], "s string, v string, n long")
    lines = df.select(copytext.line(["s", "v", "n"], verbatim=["v", "n"]).alias("line"))
    assert lines.collect()[0]["line"] == "a\\tb\tx\ty\t\\N"


def test_event_rows_escape_an_order_id_with_control_characters(spark: SparkSession) -> None:
    # order.id is only checked against the key, so it is the one field that may need escaping.
    e = event(order={"id": "o\t1\\x"})
    (row,) = staged(spark, [record(e)])["t_events"]  # staged() checks the field count too
    assert row["order_id"] == "o\t1\\x"


def test_the_first_header_of_a_name_counts(spark: SparkSession) -> None:
    e = event()
    first_wins = [("id", e["event_id"].encode()), ("id", b"other")]
    assert errors(spark, [record(e, headers=first_wins)]) == [None]
    second = [("id", b"other"), ("id", e["event_id"].encode())]
    assert errors(spark, [record(e, headers=second)]) == ["header id does not match event_id"]


@pytest.mark.parametrize(
    "change",
    [
        {"event_id": "\t" + str(uuid.uuid4())[1:]},
        {"event_type": "OrderPlaced\t"},
        {"occurred_at": "2026-11-22T23:59:59.999999Z\n"},
        {"order": {"customer_id": "c\\42"}},
        {"order": {"currency": "EU\r"}},
        {"order": {"status": "PLACED\n"}},
        {
            "order": {
                "items": [{"sku": "A\tB", "quantity": 1, "unit_price_cents": 1}],
                "total_cents": 1,
            }
        },
    ],
)
def test_a_verbatim_field_with_a_control_character_is_never_staged_as_an_event(
    spark: SparkSession, change: dict[str, Any]
) -> None:
    e = event(**change)
    out = staged(spark, [record(e)])
    assert out["t_events"] == []
    assert len(out["t_dead"]) == 1


def test_the_staged_tables_are_defined_once(spark: SparkSession) -> None:
    rows = staging.event_rows(parse.annotated(parse.classify(raw(spark, [record(event())]), MAX)))
    assert tuple(rows.columns) == staging.EVENTS.names
    ddl = staging.EVENTS.create()
    assert all(f"{c.name} {c.pg_type}" in ddl for c in staging.EVENTS.columns)
    assert staging.DEAD_LETTERS.copy() == (
        "COPY t_dead (topic, kafka_partition, kafka_offset, key, value, error) FROM STDIN"
    )
