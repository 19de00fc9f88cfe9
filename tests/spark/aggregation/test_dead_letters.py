"""Records that are not a valid v1 event are staged as dead letters with the first check they
fail, through the production path (sink.batch_payloads)."""

import json
from typing import Any

import pytest
from pyspark.sql import SparkSession

from tests.spark.aggregation.records import MAX, errors, event, record, staged

ONE_ITEM = {"quantity": 1, "unit_price_cents": 1}


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
                event(order={"items": [{"sku": "S", **ONE_ITEM, "quantity": 0}], "total_cents": 0})
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


@pytest.mark.parametrize(
    ("order", "reason"),
    [
        ({"customer_id": "c-42\n"}, "invalid order.customer_id"),
        (
            {"items": [{"sku": "SKU-1\n", **ONE_ITEM}], "total_cents": 1},
            "invalid order.items[].sku",
        ),
        (
            {"items": [{"sku": "A", **ONE_ITEM}, {"sku": "", **ONE_ITEM}], "total_cents": 2},
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


def test_the_first_header_of_a_name_counts(spark: SparkSession) -> None:
    e = event()
    first_wins = [("id", e["event_id"].encode()), ("id", b"other")]
    assert errors(spark, [record(e, headers=first_wins)]) == [None]
    second = [("id", b"other"), ("id", e["event_id"].encode())]
    assert errors(spark, [record(e, headers=second)]) == ["header id does not match event_id"]
