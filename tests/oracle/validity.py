"""TEST ORACLE: is a Kafka record a valid v1 event? Written from contract section 4c alone,
without onceflow.event_definition, its readers or their reasons: a conformance check that
agrees with them on valid versus invalid (only the readers name the reason)."""

import json
import re
from datetime import UTC, datetime
from typing import Any

from onceflow import contract

_UUID = re.compile(contract.UUID, re.ASCII)
_NAME = re.compile(contract.IDENTIFIER, re.ASCII)
_CURRENCY = re.compile(contract.CURRENCY, re.ASCII)
_TIME = re.compile(contract.TIMESTAMP, re.ASCII)
_STATUS = {e.value: s.value for e, s in contract.STATUS_AFTER.items()}
_ITEM = {"sku", "quantity", "unit_price_cents"}
_ORDER = {"id", "customer_id", "currency", "status", "total_cents", "created_at", "updated_at"}
_EVENT = {"event_id", "event_type", "schema_version", "occurred_at", "order"}


class _InvalidError(Exception):
    """Refused while decoding."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({k for k, _ in pairs}) != len(pairs):
        raise _InvalidError("duplicate key")
    return dict(pairs)


def _number(token: str) -> Any:
    if sum(c.isdigit() for c in token) > 1000:  # Jackson's limit, which Spark applies
        raise _InvalidError("number too long")
    return float(token) if any(c in token for c in ".eE") else int(token)


def _constant(token: str) -> Any:
    raise _InvalidError(token)


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _depth(value: Any) -> int:
    if isinstance(value, dict | list):
        inner = value.values() if isinstance(value, dict) else value
        return 1 + max((_depth(v) for v in inner), default=0)
    return 0


def _integer(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _time(value: Any) -> bool:
    if type(value) is not str or not _TIME.fullmatch(value):
        return False
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return False
    return (
        datetime(2000, 1, 1, tzinfo=UTC)
        <= moment
        <= datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    )


def _text(value: Any, pattern: re.Pattern[str]) -> bool:
    return type(value) is str and pattern.fullmatch(value) is not None


def _order_ok(order: Any) -> bool:
    if type(order) is not dict or set(order) != _ORDER | {"items"}:
        return False
    items = order["items"]
    if type(items) is not list or not 1 <= len(items) <= 100:
        return False
    for item in items:
        if type(item) is not dict or set(item) != _ITEM:
            return False
        if not (
            _text(item["sku"], _NAME)
            and _integer(item["quantity"], 1, 10_000)
            and _integer(item["unit_price_cents"], 0, 100_000_000)
        ):
            return False
    total = sum(i["quantity"] * i["unit_price_cents"] for i in items)
    return (
        _text(order["id"], _UUID)
        and _text(order["customer_id"], _NAME)
        and _text(order["currency"], _CURRENCY)
        and _integer(order["total_cents"], 0, 100 * 10_000 * 100_000_000)
        and order["total_cents"] == total
        and _time(order["created_at"])
        and _time(order["updated_at"])
    )


def is_valid(
    key: bytes | None, value: bytes | None, headers: list[tuple[str, bytes | None]], limit: int
) -> bool:
    """Whether the record is a valid v1 event for a reader with a `limit`-byte value limit."""
    if value is None or key is None or len(value) > limit:
        return False
    try:
        text = value.decode("utf-8")
        doc = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_int=_number,
            parse_float=_number,
            parse_constant=_constant,
        )
    except (UnicodeDecodeError, ValueError, RecursionError, _InvalidError):
        return False
    if type(doc) is not dict or set(doc) != _EVENT or _depth(doc) > 999:
        return False
    if any("\x00" in s or re.search("[\ud800-\udfff]", s) for s in _strings(doc)):
        return False
    order = doc["order"]
    first: dict[str, bytes | None] = {}
    for name, raw in headers:
        first.setdefault(name, raw)
    return (
        doc["schema_version"] == 1
        and type(doc["schema_version"]) is int
        and doc["event_type"] in _STATUS
        and _text(doc["event_id"], _UUID)
        and _time(doc["occurred_at"])
        and _order_ok(order)
        and order["status"] == _STATUS[doc["event_type"]]
        and key == order["id"].encode()
        and first.get("id") in (None, doc["event_id"].encode())
        and first.get("eventType") in (None, doc["event_type"].encode())
    )
