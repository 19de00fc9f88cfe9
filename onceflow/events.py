"""Is a Kafka record a valid v1 order event (contract section 4)? The Python reading.

The aggregation job applies the same checks, in the same order and with the same reasons, as
Spark column expressions (spark_jobs/aggregation/parse.py). Both derive their vocabulary and
limits from onceflow.contract, and one corpus of records with their expected reasons
(tests/oracle/events.py) runs through both. Known differences, where this reading is the
stricter and the contract's: a JSON number where a string is declared (Spark's from_json turns
it into text), a sku containing a newline (Spark checks the skus joined by newlines), an
offset beyond +-18:00 (Java refuses it), and a document orjson refuses as a whole (a lone
surrogate, a number beyond a double, trailing text) which Spark may read in part.
"""

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from onceflow import contract as C  # noqa: N812

_UUID = re.compile(rf"\A(?:{C.UUID})\Z")
_NAME = re.compile(rf"\A(?:{C.IDENTIFIER})\Z")
_CURRENCY = re.compile(rf"\A(?:{C.CURRENCY})\Z")
_TIMESTAMP = re.compile(rf"\A(?:{C.TIMESTAMP})\Z")
_REQUIRED = ("event_id", "event_type", "occurred_at", "order")
_REQUIRED_ORDER = (
    "id",
    "customer_id",
    "currency",
    "status",
    "total_cents",
    "created_at",
    "updated_at",
    "items",
)
# JSON types of the fields a v1 event declares (others are ignored, as Spark's schema does).
_TYPES: dict[str, type] = {
    "event_id": str,
    "event_type": str,
    "schema_version": int,
    "occurred_at": str,
    "order": dict,
}
_ORDER_TYPES: dict[str, type] = {
    "id": str,
    "customer_id": str,
    "currency": str,
    "status": str,
    "total_cents": int,
    "created_at": str,
    "updated_at": str,
    "items": list,
}
_ITEM_TYPES: dict[str, type] = {"sku": str, "quantity": int, "unit_price_cents": int}
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
WRONG_TYPE = "wrong schema: a field has the wrong JSON type"


class InvalidEventError(ValueError):
    """The record is not a valid v1 event; str() is the reason (a dead letter's `error`)."""


@dataclass(frozen=True, slots=True)
class OrderEvent:
    """The fields of a valid v1 event that downstream consumers use."""

    event_id: str
    event_type: str
    occurred_at: str
    order_id: str
    customer_id: str
    currency: str
    total_cents: int


def _typed(value: Any, kind: type) -> bool:
    """None (absent) or of the JSON type `kind`; bool is no int in JSON, ints fit a long."""
    if value is None:
        return True
    if kind is int:
        return type(value) is int and _LONG_MIN <= value <= _LONG_MAX
    return type(value) is kind


def _well_typed(doc: dict[str, Any]) -> bool:
    if not all(_typed(doc.get(f), t) for f, t in _TYPES.items()):
        return False
    order = doc.get("order")
    if order is None:
        return True
    if not all(_typed(order.get(f), t) for f, t in _ORDER_TYPES.items()):
        return False
    return all(
        item is None  # a null item is reported as missing its fields
        or (type(item) is dict and all(_typed(item.get(f), t) for f, t in _ITEM_TYPES.items()))
        for item in order.get("items") or ()
    )


def _decode(value: bytes | None, max_bytes: int) -> dict[str, Any]:
    if value is None:
        raise InvalidEventError("empty value (tombstone)")
    if len(value) > max_bytes:
        raise InvalidEventError(f"oversized: {len(value)} bytes > {max_bytes}")
    try:
        doc = orjson.loads(value)  # also refuses invalid UTF-8
    except orjson.JSONDecodeError:
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidEventError("value is not UTF-8 text") from None
        raise InvalidEventError("value is not JSON") from None
    if type(doc) is not dict:
        raise InvalidEventError("value is not a JSON object")
    if not _well_typed(doc):
        raise InvalidEventError(WRONG_TYPE)
    return doc


def _check_fields(doc: dict[str, Any]) -> None:
    version = doc.get("schema_version")
    if version is None:
        raise InvalidEventError("missing field schema_version")
    if version != C.SCHEMA_VERSION:
        raise InvalidEventError(f"unsupported schema_version {version}")
    for name in _REQUIRED:
        if doc.get(name) is None:
            raise InvalidEventError(f"missing field {name}")
    order = doc["order"]
    for name in _REQUIRED_ORDER:
        if order.get(name) is None:
            raise InvalidEventError(f"missing field order.{name}")
    checks = (
        (doc["event_type"] in C.STATUS_AFTER, f"unknown event_type {doc['event_type']}"),
        (_UUID.match(doc["event_id"]), "event_id is not a UUID"),
        (_is_time(doc["occurred_at"]), "occurred_at is not an ISO 8601 time"),
        (_TIMESTAMP.match(order["created_at"]), "order.created_at is not an ISO 8601 time"),
        (_TIMESTAMP.match(order["updated_at"]), "order.updated_at is not an ISO 8601 time"),
        (order["id"] != "", "order.id is empty"),
        (_NAME.match(order["customer_id"]), "invalid order.customer_id"),
        (_CURRENCY.match(order["currency"]), "invalid order.currency"),
        (
            order["status"] == C.STATUS_AFTER.get(doc["event_type"]),
            "order.status does not match event_type",
        ),
    )
    for ok, reason in checks:
        if not ok:
            raise InvalidEventError(reason)
    _check_items(order)


def _is_time(text: str) -> bool:
    if not _TIMESTAMP.match(text):
        return False
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _check_items(order: dict[str, Any]) -> None:
    items: list[dict[str, Any]] = order["items"]
    if not C.MIN_ITEMS <= len(items) <= C.MAX_ITEMS:
        raise InvalidEventError(f"order.items must have {C.MIN_ITEMS}..{C.MAX_ITEMS} items")
    if any(item is None or item.get(f) is None for item in items for f in _ITEM_TYPES):
        raise InvalidEventError("order.items[] has a missing sku, quantity or unit_price_cents")
    if not all(_NAME.match(item["sku"]) for item in items):
        raise InvalidEventError("invalid order.items[].sku")
    if not all(C.MIN_QUANTITY <= item["quantity"] <= C.MAX_QUANTITY for item in items):
        raise InvalidEventError(
            f"order.items[].quantity outside {C.MIN_QUANTITY}..{C.MAX_QUANTITY}"
        )
    low, high = C.MIN_UNIT_PRICE_CENTS, C.MAX_UNIT_PRICE_CENTS
    if not all(low <= item["unit_price_cents"] <= high for item in items):
        raise InvalidEventError(f"order.items[].unit_price_cents outside {low}..{high}")
    if order["total_cents"] != sum(i["quantity"] * i["unit_price_cents"] for i in items):
        raise InvalidEventError("order.total_cents is not the sum of its items")


def _check_envelope(
    doc: dict[str, Any], key: bytes | None, headers: dict[str, bytes | None]
) -> None:
    if key is None:
        raise InvalidEventError("missing key")
    if key != doc["order"]["id"].encode():
        raise InvalidEventError("key does not match order.id")
    if headers.get("id") not in (None, doc["event_id"].encode()):
        raise InvalidEventError("header id does not match event_id")
    if headers.get("eventType") not in (None, doc["event_type"].encode()):
        raise InvalidEventError("header eventType does not match event_type")


def parse(
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]] | None,
    max_bytes: int = C.MAX_EVENT_BYTES,
) -> OrderEvent:
    """The v1 event in this record, or InvalidEventError with the first check it fails."""
    doc = _decode(value, max_bytes)
    _check_fields(doc)
    first: dict[str, bytes | None] = {}
    for name, raw in headers or []:
        first.setdefault(name, raw)  # the first header of a name counts
    _check_envelope(doc, key, first)
    order = doc["order"]
    return OrderEvent(
        event_id=doc["event_id"].lower(),
        event_type=doc["event_type"],
        occurred_at=doc["occurred_at"],
        order_id=order["id"],
        customer_id=order["customer_id"],
        currency=order["currency"],
        total_cents=order["total_cents"],
    )
