"""Kafka records that are not valid v1 events (contract section 4c), each with the reason every
reader must give, and records that are valid though unusual.

One corpus for the Python reader (onceflow.events), the Spark parser
(spark_jobs/aggregation/parse.py) and the end-to-end tests, which can produce the same records
on the real topic. The reasons are written out here, not taken from the definition, so a change
of the definition's reasons shows up as a failing test.

Records built from an event come in each serialized form of FORMS: the connector's (compact,
keys in jsonb's order), `json.dumps` of the document, and keys reversed (a form neither reader
has a shortcut for).
"""

import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.oracle.events import Record, event, record

LIMIT = 64 * 1024  # the readers' value limit in the unit tests of this corpus
Event = dict[str, Any]
Form = Callable[[Event], str]
TIME_REASON = "is not an RFC 3339 time with a zone in years 2000..9999"
NUL_IN = "value has a string with U+0000"
LONE = "value has a lone surrogate escape (not valid Unicode)"
NOT_JSON = "value is not JSON"
DUPLICATE = "value has a duplicate key in a JSON object"
BIG = 2**63  # one beyond bigint
# The second copy of an event id with other content (contract section 4c); the first stays
# counted. Two records, so not a kind of `corpus`: tests/integration/poison builds it.
REUSED_ID = "event id reused with different content"


def _jsonb_order(value: Any) -> Any:
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k), k))  # ASCII keys: bytes = characters
        return {k: _jsonb_order(value[k]) for k in keys}
    if isinstance(value, list):
        return [_jsonb_order(v) for v in value]
    return value


def _reversed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reversed(value[k]) for k in reversed(value)}
    if isinstance(value, list):
        return [_reversed(v) for v in value]
    return value


def wire(e: Event) -> str:
    """`e` as the connector writes it: PostgreSQL jsonb's key order, no spaces."""
    return json.dumps(_jsonb_order(e), separators=(",", ":"))


FORMS: dict[str, Form] = {
    "wire": wire,
    "document": json.dumps,
    "reversed": lambda e: json.dumps(_reversed(e), indent=1),
}


@dataclass(frozen=True)
class Bad:
    """A kind of bad record: `make(form)` builds one (fresh ids each call)."""

    name: str
    reason: str
    make: Callable[[Form], Record]


def _from(
    e: Callable[[], Event],
    *,
    text: Callable[[str], str] = lambda t: t,
    raw: Callable[[bytes], bytes] = lambda b: b,
    key: Callable[[Event], bytes | None] = lambda e: e["order"]["id"].encode(),
    headers: Callable[[Event], list[tuple[str, bytes]]] | None = None,
) -> Callable[[Form], Record]:
    """A maker: the event `e()` in a form, its text and bytes edited, with key and headers."""

    def make(form: Form) -> Record:
        doc = e()
        value = raw(text(form(doc)).encode())
        head = headers(doc) if headers else _headers(doc)
        return record(None, key=key(doc), value=value, headers=head)

    return make


def _headers(e: Event) -> list[tuple[str, bytes]]:
    return [
        ("id", str(e.get("event_id")).encode()),
        ("eventType", str(e.get("event_type")).encode()),
    ]


def _order(**changes: Any) -> Callable[[], Event]:
    return lambda: event(order=changes)


def _item(**changes: Any) -> Callable[[], Event]:
    item: dict[str, Any] = {"sku": "SKU-1", "quantity": 1, "unit_price_cents": 1} | changes
    total = item["quantity"] * item["unit_price_cents"]
    total = total if isinstance(total, int) and -BIG <= total < BIG else 1
    return _order(items=[item], total_cents=total)


def _items(*changes: dict[str, Any]) -> Callable[[], Event]:
    """Items that are each a valid item with its changes (a None value: the field left out)."""
    base: dict[str, Any] = {"sku": "SKU-1", "quantity": 1, "unit_price_cents": 1}
    items = [
        {k: v for k, v in (base | change).items() if not (k in change and v is None)}
        for change in changes
    ]
    return _order(items=items, total_cents=len(items))


def _replace(old: str, new: str) -> Callable[[str], str]:
    return lambda text: text.replace(old, new, 1)


def _nul(path: str) -> Bad:
    """U+0000 appended to the string at `path` (dotted; items[0] for the first item)."""

    def e() -> Event:
        doc = event()
        *parents, name = path.split(".")
        target = doc
        for part in parents:
            target = target["items"][0] if part == "items[0]" else target[part]
        target[name] += "\x00"
        return doc

    return Bad(f"nul-in-{path}", NUL_IN, _from(e))


_STRINGS = (
    "event_id",
    "event_type",
    "occurred_at",
    "order.id",
    "order.customer_id",
    "order.currency",
    "order.status",
    "order.created_at",
    "order.updated_at",
    "order.items[0].sku",
)


def _times(year: str) -> list[Bad]:
    stamp = f"{year}-01-01T00:00:00Z"
    return [
        Bad(
            f"year-{year}-occurred_at",
            f"occurred_at {TIME_REASON}",
            _from(lambda: event(occurred_at=stamp)),
        ),
        Bad(
            f"year-{year}-created_at",
            f"order.created_at {TIME_REASON}",
            _from(_order(created_at=stamp)),
        ),
        Bad(
            f"year-{year}-updated_at",
            f"order.updated_at {TIME_REASON}",
            _from(_order(updated_at=stamp)),
        ),
    ]


def corpus(limit: int) -> list[Bad]:
    """Every kind of bad record, for readers whose value limit is `limit` bytes."""
    huge = "c" * (1 << 20)
    huge_size = len(wire(event(order={"customer_id": huge})).encode())
    other_id = str(uuid.uuid4())
    return [
        *(_nul(path) for path in _STRINGS),
        Bad("nul-in-unknown-field", NUL_IN, _from(lambda: event(note="\x00"))),
        Bad("lone-high-surrogate", LONE, _from(_order(customer_id="c\ud800"))),
        Bad("lone-low-surrogate", LONE, _from(_item(sku="S\udc00"))),
        Bad("lone-surrogate-in-a-key", LONE, _from(lambda: {**event(), "\ud800": 1})),
        Bad(
            "surrogate-pair-is-unicode",
            "invalid order.customer_id",
            _from(_order(customer_id="c\U0001f600")),
        ),
        Bad(
            "escaped-backslash-before-u",
            "invalid order.customer_id",
            _from(_order(customer_id="c\\ud800")),
        ),
        Bad(
            "invalid-utf8",
            "value is not UTF-8 text",
            _from(_order(customer_id="c-BAD"), raw=lambda b: b.replace(b"BAD", b"\xff\xfe")),
        ),
        Bad(
            "one-mb-string",
            f"oversized: {huge_size} bytes > {limit}",
            lambda _form: record(
                None, key=b"k", value=wire(event(order={"customer_id": huge})).encode()
            ),
        ),
        Bad(
            "customer-id-too-long", "invalid order.customer_id", _from(_order(customer_id="c" * 65))
        ),
        Bad(
            "string-too-long-within-the-size-limit",
            "invalid order.customer_id",
            _from(_order(customer_id="c" * (limit // 2))),
        ),
        Bad("sku-too-long", "invalid order.items[].sku", _from(_item(sku="S" * 65))),
        Bad("currency-too-long", "invalid order.currency", _from(_order(currency="EURO"))),
        Bad(
            "number-as-string",
            "wrong JSON type: order.customer_id must be a string",
            _from(_order(customer_id=42)),
        ),
        Bad(
            "object-as-string",
            "wrong JSON type: event_id must be a string",
            _from(lambda: event(event_id={})),
        ),
        Bad(
            "quantity-above-bound",
            "order.items[].quantity outside 1..10000",
            _from(_item(quantity=10_001)),
        ),
        Bad("quantity-zero", "order.items[].quantity outside 1..10000", _from(_item(quantity=0))),
        Bad(
            "quantity-negative",
            "order.items[].quantity outside 1..10000",
            _from(_item(quantity=-1, unit_price_cents=0)),
        ),
        Bad(
            "quantity-beyond-bigint",
            "wrong JSON type: order.items[].quantity must be an integer within 64 bits",
            _from(_item(quantity=BIG)),
        ),
        Bad(
            "quantity-not-an-integer",
            "wrong JSON type: order.items[].quantity must be an integer within 64 bits",
            _from(_item(quantity=1.0)),
        ),
        Bad(
            "price-above-bound",
            "order.items[].unit_price_cents outside 0..100000000",
            _from(_item(unit_price_cents=100_000_001)),
        ),
        Bad(
            "price-negative",
            "order.items[].unit_price_cents outside 0..100000000",
            _from(
                _order(items=[{"sku": "S", "quantity": 1, "unit_price_cents": -1}], total_cents=0)
            ),
        ),
        Bad(
            "price-beyond-bigint",
            "wrong JSON type: order.items[].unit_price_cents must be an integer within 64 bits",
            _from(_item(unit_price_cents=-BIG - 1)),
        ),
        Bad(
            "total-negative",
            "order.total_cents outside 0..100000000000000",
            _from(_order(total_cents=-1)),
        ),
        Bad(
            "total-beyond-bigint",
            "wrong JSON type: order.total_cents must be an integer within 64 bits",
            _from(_order(total_cents=BIG)),
        ),
        Bad(
            "total-not-the-sum",
            "order.total_cents is not the sum of its items",
            _from(_order(total_cents=1)),
        ),
        *_times("0000"),
        *_times("10000"),
        Bad(
            "instant-in-year-10000",
            f"occurred_at {TIME_REASON}",
            _from(lambda: event(occurred_at="9999-12-31T23:30:00-01:00")),
        ),
        Bad(
            "instant-the-second-after-the-last",
            f"occurred_at {TIME_REASON}",
            _from(lambda: event(occurred_at="9999-12-31T23:59:00.5-00:01")),
        ),
        Bad(
            "no-such-day",
            f"order.created_at {TIME_REASON}",
            _from(_order(created_at="2026-02-29T10:00:00Z")),
        ),
        Bad(
            "no-zone",
            f"occurred_at {TIME_REASON}",
            _from(lambda: event(occurred_at="2026-11-22T10:15:03")),
        ),
        Bad(
            "offset-beyond-18h",
            f"occurred_at {TIME_REASON}",
            _from(lambda: event(occurred_at="2026-11-22T10:15:03+18:30")),
        ),
        Bad(
            "unknown-event-type",
            "unknown event_type OrderRefunded",
            _from(lambda: event(event_type="OrderRefunded")),
        ),
        Bad("unknown-status", "unknown order.status LOST", _from(_order(status="LOST"))),
        Bad(
            "status-disagrees",
            "order.status does not match event_type",
            _from(lambda: event("OrderPaid", order={"status": "PLACED"})),
        ),
        Bad(
            "schema-version-2",
            "unsupported schema_version 2",
            _from(lambda: event(schema_version=2)),
        ),
        Bad(
            "schema-version-2-with-new-fields",
            "unsupported schema_version 2",
            _from(lambda: event(schema_version=2, coupon="X", event_id="v2")),
        ),
        Bad("order-id-not-a-uuid", "order.id is not a UUID", _from(_order(id="order-1"))),
        Bad(
            "key-not-order-id",
            "key does not match order.id",
            _from(event, key=lambda _e: other_id.encode()),
        ),
        Bad(
            "key-upper-case",
            "key does not match order.id",
            _from(event, key=lambda e: e["order"]["id"].upper().encode()),
        ),
        Bad("no-key", "missing key", _from(event, key=lambda _e: None)),
        Bad(
            "null-value",
            "empty value (tombstone)",
            lambda _form: record(None, key=b"k", value=None),
        ),
        Bad(
            "header-id-mismatch",
            "header id does not match event_id",
            _from(event, headers=lambda _e: [("id", other_id.encode())]),
        ),
        Bad(
            "header-event-type-mismatch",
            "header eventType does not match event_type",
            _from(event, headers=lambda _e: [("eventType", b"OrderPaid")]),
        ),
        Bad(
            "duplicate-key",
            DUPLICATE,
            _from(lambda: event(dup=1), text=_replace('"dup"', '"event_type"')),
        ),
        Bad(
            "duplicate-key-in-order",
            DUPLICATE,
            _from(_order(dup="X"), text=_replace('"dup"', '"currency"')),
        ),
        Bad(
            "duplicate-key-in-item",
            DUPLICATE,
            _from(_item(dup=1), text=_replace('"dup"', '"quantity"')),
        ),
        Bad("unknown-field", "unknown field coupon", _from(lambda: event(coupon="X"))),
        Bad("unknown-field-in-order", "unknown field order.coupon", _from(_order(coupon=None))),
        Bad(
            "unknown-field-in-item", "unknown field order.items[].color", _from(_item(color="red"))
        ),
        Bad("missing-field", "missing field order.updated_at", _from(_order(updated_at=None))),
        Bad(
            "null-item",
            "wrong JSON type: order.items[] must be an object",
            _from(_order(items=[None])),
        ),
        # Several items: the first failing check in check order over all of them (not the
        # first failing item), and a non-object element before any check of the items' fields.
        Bad(
            "checks-in-order-over-items",
            "wrong JSON type: order.items[].sku must be a string",
            _from(_items({"quantity": None}, {"sku": 5})),
        ),
        Bad(
            "unknown-field-in-second-item",
            "unknown field order.items[].color",
            _from(_items({}, {"color": "red"})),
        ),
        Bad(
            "non-object-item-before-unknown-field",
            "wrong JSON type: order.items[] must be an object",
            _from(
                _order(items=[1, {"sku": "SKU-1", "quantity": 1, "unit_price_cents": 1, "x": 1}])
            ),
        ),
        Bad("trailing-text", NOT_JSON, _from(event, text=lambda t: t + " x")),
        Bad("trailing-value", NOT_JSON, _from(event, text=lambda t: t + "], [{}")),
        Bad("nan", NOT_JSON, _from(_order(total_cents=float("nan")))),
        Bad("byte-order-mark", NOT_JSON, _from(event, text=lambda t: "\ufeff" + t)),
        # Jackson guesses these encodings from the first bytes; JSON here is UTF-8.
        Bad("utf-16-le", NOT_JSON, _from(event, raw=lambda b: b.decode().encode("utf-16-le"))),
        Bad("utf-32-le", NOT_JSON, _from(event, raw=lambda b: b.decode().encode("utf-32-le"))),
        Bad(
            "control-character",
            NOT_JSON,
            _from(_order(customer_id="c-TAB"), text=_replace("TAB", "\t")),
        ),
        Bad("number-of-1001-digits", NOT_JSON, _from(_order(total_cents=int("9" * 1001)))),
        Bad(
            "number-of-1000-digits",
            "wrong JSON type: order.total_cents must be an integer within 64 bits",
            _from(_order(total_cents=int("9" * 1000))),
        ),
        Bad(
            "nested-999-deep",
            "unknown field deep",
            _from(lambda: event(deep="DEEP"), text=_replace('"DEEP"', "[" * 998 + "]" * 998)),
        ),
        Bad(
            "nested-1000-deep",
            NOT_JSON,
            _from(lambda: event(deep="DEEP"), text=_replace('"DEEP"', "[" * 999 + "]" * 999)),
        ),
        Bad("a-json-string", "value is not a JSON object", _from(event, text=json.dumps)),
        Bad("not-json", NOT_JSON, lambda _form: record(None, key=b"k", value=b"nope")),
    ]


# Valid records that a reader might wrongly refuse.
GOOD: dict[str, Callable[[Form], Record]] = {
    "plain": _from(event),
    "no-headers": _from(event, headers=lambda _e: []),
    "upper-case-ids": _from(
        lambda: event(event_id=str(uuid.uuid4()).upper()),
        headers=lambda e: [("id", e["event_id"].encode())],
    ),
    "escaped-letters": _from(event, text=_replace('"c-42"', '"c\\u002d42"')),
    "offset-time": _from(lambda: event(occurred_at="2026-11-22T10:15:03.123456789+18:00")),
    "last-instant": _from(lambda: event(occurred_at="9999-12-31T23:59:59.999999Z")),
    "hundred-items": _from(
        _order(
            items=[
                {"sku": f"S{i}", "quantity": 10_000, "unit_price_cents": 100_000_000}
                for i in range(100)
            ],
            total_cents=100_000_000_000_000,
        )
    ),
    "negative-zero": _from(
        _item(unit_price_cents=0),
        text=lambda t: re.sub(r'("unit_price_cents":\s*)0\b', r"\g<1>-0", t, count=1),
    ),
}
