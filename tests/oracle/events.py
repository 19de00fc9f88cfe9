"""Kafka records of the order-event topic and, for records that are not a valid v1 event, the
reason a reader must give. One corpus for both readers of contract section 4 (the Spark job's
parse.py and onceflow.events), so they cannot drift apart."""

import json
import uuid
from collections.abc import Callable
from typing import Any

from onceflow import contract

MAX = 4096  # the readers' max event bytes in these cases
STATUS = {event.value: status.value for event, status in contract.STATUS_AFTER.items()}
ONE_ITEM = {"quantity": 1, "unit_price_cents": 1}
# key, value, topic, partition, offset, headers: the Kafka source's columns
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


# A bad record (built on call: each has fresh ids) and its reason.
BAD: list[tuple[Callable[[], Record], str]] = [
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
]

# Orders whose identifiers or items break a rule, and the reason.
BAD_ORDERS: list[tuple[dict[str, Any], str]] = [
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
]
