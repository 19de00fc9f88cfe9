"""Generated records for the readers' differential tests: a valid v1 event (random items,
type, ids, times) with at most one fault in its value, headers or key (FAULTS), in any
serialized form (tests/oracle/bad_records.FORMS)."""

import json
import uuid
from typing import Any

from hypothesis import strategies as st

from onceflow import contract as C  # noqa: N812
from onceflow import event_definition as D  # noqa: N812
from onceflow.event_definition import Field, Json
from tests.oracle.bad_records import FORMS
from tests.oracle.events import STATUS, Record, event

# Generated records: a valid event (random items, type, ids, times), maybe edited.
_TIMES = (
    "2026-11-22T10:15:03Z",
    "2000-01-01T00:00:00Z",
    "2000-01-01T00:00:00+00:01",
    "1999-12-31T23:59:59-00:01",
    "9999-12-31T23:59:59.999999Z",
    "9999-12-31T23:59:59-00:01",
    "2026-02-30T00:00:00Z",
    "2026-11-22T10:15:03.123456789+18:00",
    "2026-11-22T10:15:03+18:01",
    "2026-11-22 10:15:03Z",
)
_VALID_TIMES = (_TIMES[0], _TIMES[1], _TIMES[4], _TIMES[7])
_ODD: st.SearchStrategy[Any] = st.sampled_from(
    [
        *(0, 1, -1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 10_000, 10_001),
        *(100_000_000, 100_000_001, C.MAX_TOTAL_CENTS, C.MAX_TOTAL_CENTS + 1),
        *(True, False, None, 1.0, 0.5, [], {}, [{}], "", "EUR", "eur", "EURO", "x" * 65),
        *(*_TIMES, "OrderPaid", "PAID", "SHIPPED", "a\x00", "a\ud800", 'a"b', "a\\b", "é"),
    ]
)
_VALUE = st.one_of(_ODD, st.integers(), st.text(max_size=8))
_PATHS = (
    "event_id",
    "event_type",
    "schema_version",
    "occurred_at",
    "order",
    "order.id",
    "order.customer_id",
    "order.currency",
    "order.status",
    "order.total_cents",
    "order.created_at",
    "order.updated_at",
    "order.items",
    "order.items.0.sku",
    "order.items.0.quantity",
    "order.items.0.unit_price_cents",
)


@st.composite
def valid_events(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from([k.value for k in C.EventType]))
    items: list[dict[str, Any]] = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "sku": st.from_regex(r"\A[A-Za-z0-9._:-]{1,8}\Z"),
                    "quantity": st.integers(C.MIN_QUANTITY, C.MAX_QUANTITY),
                    "unit_price_cents": st.integers(C.MIN_UNIT_PRICE_CENTS, C.MAX_UNIT_PRICE_CENTS),
                }
            ),
            min_size=1,
            max_size=4,
        )
    )
    e = event(kind, order={"items": items, "status": STATUS[kind]})
    e["order"]["total_cents"] = sum(i["quantity"] * i["unit_price_cents"] for i in items)
    e["occurred_at"] = draw(st.sampled_from(_VALID_TIMES))
    if draw(st.booleans()):
        e["event_id"] = e["event_id"].upper()
    return e


def _edit(e: dict[str, Any], path: str, value: Any, delete: bool) -> None:
    *parents, name = path.split(".")
    target: Any = e
    for part in parents:
        target = target[int(part)] if part.isdigit() else target.get(part)
        if not isinstance(target, dict | list):
            return
    if isinstance(target, dict):
        if delete:
            target.pop(name, None)
        else:
            target[name] = value
    elif isinstance(target, list) and name.isdigit() and target and not delete:
        target[0] = value


_TEXT_EDITS = (b" ", b"\\", b'"', b",", b"\x00", b"\xff", b"")  # b"": delete a byte


def _near(field: Field) -> tuple[Any, ...]:
    """Values at and just beyond the field's rule (its other faults are in _VALUE)."""
    if field.json is Json.INTEGER:
        low, high = field.minimum, field.maximum
        return tuple(v for b in (low, high) if b is not None for v in (b - 1, b, b + 1))
    if field.timestamp:
        return _TIMES
    if field.one_of:
        return (*field.one_of, *(v.lower() for v in field.one_of), "")
    size = field.max_length or 1
    return ("A" * size, "A" * (size + 1), "a" * size, "-" * size, "A" * (size - 1) + " ")


_NEAR = {f.path: _near(f) for f in D.FIELDS if f.json in (Json.INTEGER, Json.STRING)}
_NEAR["event_id"] = _NEAR["order.id"] = (
    str(uuid.uuid4()).upper(),
    str(uuid.uuid4()).replace("-", ""),
    str(uuid.uuid4()) + "0",
    "g" + str(uuid.uuid4())[1:],
)


def _balance(e: dict[str, Any], path: str) -> None:
    """After an edit: the total and the status kept consistent where they can be, so the
    edit itself is what the readers judge."""
    order = e.get("order")
    if not isinstance(order, dict):
        return
    if path == "event_type" and str(e.get("event_type")) in STATUS:
        order["status"] = STATUS[e["event_type"]]
    items = order.get("items")
    if path.startswith("order.items.") and isinstance(items, list):
        try:
            order["total_cents"] = sum(i["quantity"] * i["unit_price_cents"] for i in items)
        except (KeyError, TypeError):
            return


# A value fault, the likeliest to hide among the field rules, is drawn most often.
FAULTS = ("none", *["value"] * 6, "delete", "extra", "text", "duplicate", "headers", "key")


_COPIES = (
    ("event_id", b""),
    ("event_type", b""),
    ("order", b""),
    ("schema_version", b""),
    ("id", b'"order"'),
    ("status", b'"order"'),
    ("sku", b'"items"'),
)


def _duplicate(draw: st.DrawFn, value: bytes) -> bytes:
    """A key of the root, the order or an item written twice, the copy first."""
    name, inside = draw(st.sampled_from(_COPIES))
    copy = json.dumps({name: draw(_VALUE)}, ensure_ascii=False)[1:-1] + ","
    brace = value.find(b"{", value.find(inside) if inside else 0)
    return value[: brace + 1] + copy.encode("utf-8", "surrogatepass") + value[brace + 1 :]


@st.composite
def records(draw: st.DrawFn) -> Record:
    """A valid event with at most one fault (FAULTS) in its value, headers or key."""
    e = draw(valid_events())
    fault = draw(st.sampled_from(FAULTS))
    if fault in ("value", "delete"):
        path = draw(st.sampled_from(_PATHS))
        near = _NEAR.get(path.replace(".0.", "[]."), ())
        odd: st.SearchStrategy[Any] = st.sampled_from(near) if near else _VALUE
        new: Any = draw(odd if draw(st.booleans()) else _VALUE)
        _edit(e, path, new, fault == "delete")
        _balance(e, path)
    if fault == "extra":
        _edit(e, draw(st.sampled_from(["extra", "order.extra", "order.items.0.extra"])), 1, False)
    form = draw(st.sampled_from([*FORMS.values(), lambda d: json.dumps(d, ensure_ascii=False)]))
    value = form(e).encode("utf-8", "surrogatepass")
    if fault == "text":
        at, raw = draw(st.integers(0, len(value) - 1)), draw(st.sampled_from(_TEXT_EDITS))
        value = value[:at] + raw + value[at + (0 if raw else 1) :]
    if fault == "duplicate":
        value = _duplicate(draw, value)
    event_id = str(e.get("event_id")).encode("utf-8", "surrogatepass")
    event_type = str(e.get("event_type")).encode("utf-8", "surrogatepass")
    headers = [("id", event_id), ("eventType", event_type)]
    if fault == "headers":
        header = st.sampled_from([event_id, event_id.lower(), b"OrderPaid", b"other", None])
        headers = draw(
            st.lists(st.tuples(st.sampled_from(["id", "eventType", "x"]), header), max_size=3)
        )
    order = e.get("order")
    order_id = str(order.get("id")) if isinstance(order, dict) else str(uuid.uuid4())
    key: bytes | None = order_id.encode("utf-8", "surrogatepass")
    if fault == "key":
        raw = order_id.encode("utf-8", "surrogatepass")
        other = [order_id.upper().encode("utf-8", "surrogatepass"), None, b"", raw + b" "]
        key = draw(st.sampled_from(other))
    return key, value, "t", 0, 0, headers
