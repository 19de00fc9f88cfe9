"""Kafka records of the order-event topic: valid v1 events (contract section 4) and raw records.
The records that are not valid events, with their reasons, are in tests/oracle/bad_records.py."""

import json
import uuid
from typing import Any

from onceflow import contract

MAX = 4096  # the readers' max event bytes in these cases
STATUS = {event.value: status.value for event, status in contract.STATUS_AFTER.items()}
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
