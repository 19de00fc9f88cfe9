"""Valid events as the production path (render.staged_rows) stages them for t_events: every
column of staging.EVENTS in its place, text kept as it came, and the fields validated by pattern
anchored at both ends (a control character before or after makes a dead letter)."""

from typing import Any

import orjson
from pyspark.sql import SparkSession

from services.ops.fingerprint import fingerprint
from tests.spark.aggregation.records import KAFKA_TS, errors, event, record, staged

CONTROL = "\t\n\r\\"


def test_a_valid_event_is_staged_with_every_column_in_place(spark: SparkSession) -> None:
    e = event()
    out = staged(spark, [record(e)])
    assert out["t_dead"] == []
    (row,) = out["t_events"]
    assert int(row.pop("fingerprint")) == fingerprint(e)  # its content's (services/ops)
    assert {**row, "items": orjson.loads(row["items"])} == {
        "kafka_partition": "0",
        "kafka_offset": "0",
        "kafka_timestamp": KAFKA_TS,  # UTC, read by a UTC session
        "event_id": e["event_id"],
        "event_type": "OrderPlaced",
        "occurred_at": "2026-11-22 23:59:59.999999",  # UTC, read by a UTC session
        "day": "2026-11-22",  # the UTC day
        "order_id": e["order"]["id"],
        "customer_id": "c-42",
        "currency": "EUR",
        "status": "PLACED",
        "status_rank": "0",
        "total_cents": "2600",
        "items": e["order"]["items"],
    }


def test_offsets_in_other_zones_count_on_their_utc_day(spark: SparkSession) -> None:
    e = event(occurred_at="2026-11-23T00:30:00+01:00")
    (row,) = staged(spark, [record(e)])["t_events"]
    assert row["day"] == "2026-11-22"


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


def test_an_order_id_that_is_no_uuid_is_a_dead_letter(spark: SparkSession) -> None:
    # Contract 4c: order.id equals the key AND is a UUID (a key may hold anything).
    e = event(order={"id": "o\t1\\x"})
    assert errors(spark, [record(e)]) == ["order.id is not a UUID"]


def _hostile_events() -> list[dict[str, Any]]:
    """An event per pattern-validated text field, control character and end of the value: the
    character prepended or appended (a trailing newline also proves the `\\z` anchoring)."""
    hostile = []
    for c in CONTROL:
        for before, after in ((c, ""), ("", c)):
            for name in ("event_id", "event_type", "occurred_at"):
                e = event()
                e[name] = before + e[name] + after
                hostile.append(e)
            for name in ("id", "customer_id", "currency", "status"):
                e = event()
                e["order"][name] = before + e["order"][name] + after
                hostile.append(e)
            e = event()
            e["order"]["items"][0]["sku"] = before + "SKU-1" + after
            hostile.append(e)
    return hostile


def test_a_validated_field_with_a_control_character_is_a_dead_letter(
    spark: SparkSession,
) -> None:
    hostile = _hostile_events()
    reasons = errors(spark, [record(event()), *map(record, hostile)])
    assert reasons[0] is None
    assert all(reasons[1:]), [e for e, r in zip(hostile, reasons[1:], strict=True) if r is None]
