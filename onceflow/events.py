"""Is a Kafka record a valid v1 order event? The Python reader (the notifications processor's).

Every check below is derived by code from the one definition, onceflow.event_definition: its
phases in order, its FIELDS table (JSON types, rules, reasons) and its RELATIONS. The Spark
parser's EventCheck (spark_jobs/aggregation/java, driven by the same declarations exported as
data) follows this module's procedure, so both readers give every record the same reason; the
shared corpus (tests/oracle/bad_records.py) and generated records run through both to hold
them to it.

`parse` first tries the fast path compiled from the same definition (event_reader_fast): it
accepts a valid record at a fifth of the cost and leaves every other record to the phases
below (`exact`), which decide it and give the reason.
"""

import functools
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from onceflow import contract as C  # noqa: N812
from onceflow import event_definition as D  # noqa: N812
from onceflow.event_definition import Field, Json
from onceflow.event_json import NotJsonError, decode
from onceflow.event_reader_fast import compile_reader

# re.ASCII: `\d` is [0-9], as in Java.
_FULL = {f.path: re.compile(f"(?:{f.pattern})", re.ASCII) for f in D.FIELDS if f.pattern}
_BACKSLASHES = re.compile(D.ESCAPED_BACKSLASH[0])
_LONE_SURROGATE = re.compile(D.LONE_SURROGATE)
_NUL = re.compile(D.NUL)
_LONG = (-(2**63), 2**63 - 1)
_TYPE: dict[Json, type[Any]] = {
    Json.STRING: str,
    Json.INTEGER: int,
    Json.OBJECT: dict,
    Json.ARRAY: list,
}
# Derived from the definition once, not per record: each object path's fields (with their
# names, Python types and whether an integer), its names, and (_steps) each path as steps.
_OBJECTS = [D.ROOT, *(p for p in map(D.nested, D.FIELDS) if p is not None)]
_CHILDREN = {
    path: (
        tuple((f, f.name, _TYPE[f.json], f.json is Json.INTEGER) for f in D.children(path)),
        {f.name for f in D.children(path)},
    )
    for path in _OBJECTS
}


@functools.cache
def _steps(path: str) -> tuple[tuple[str, bool], ...]:
    return tuple((part.removesuffix("[]"), part.endswith("[]")) for part in path.split("."))


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


def _text(value: bytes | None, max_bytes: int) -> str:
    """Phase 1: the value as text."""
    if value is None:
        raise InvalidEventError(D.TOMBSTONE)
    if len(value) > max_bytes:
        raise InvalidEventError(D.oversized(len(value), max_bytes))
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidEventError(D.NOT_UTF8) from None
    if D.ESCAPE_MARK in text:
        escapes = _BACKSLASHES.sub(D.ESCAPED_BACKSLASH[1], text)
        if _LONE_SURROGATE.search(escapes):
            raise InvalidEventError(D.HAS_LONE_SURROGATE)
        if _NUL.search(escapes):
            raise InvalidEventError(D.HAS_NUL)
    return text


def _document(text: str) -> dict[str, Any]:
    """Phase 2: the one JSON object the text holds."""
    try:
        decoded = decode(text)
    except NotJsonError:
        raise InvalidEventError(D.NOT_JSON) from None
    if type(decoded.value) is not dict:
        raise InvalidEventError(D.NOT_OBJECT)
    if decoded.duplicate:
        raise InvalidEventError(D.DUPLICATE_KEY)
    return decoded.value


def _is(value: Any, json: Json) -> bool:
    """Whether a present value is of the JSON type (bool is no integer in JSON)."""
    if type(value) is not _TYPE[json]:
        return False
    return json is not Json.INTEGER or _LONG[0] <= value <= _LONG[1]


def _instant_ok(text: str) -> bool:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return False
    return D.EARLIEST <= moment <= D.LATEST


# A field's rule as plain values (read once, not per record): is an array (its length is
# checked), one_of, max_length, the compiled pattern, timestamp, minimum, maximum.
Rule = tuple[
    bool, tuple[str, ...], int | None, re.Pattern[str] | None, bool, int | None, int | None
]
_RULES: dict[str, Rule] = {
    f.path: (
        f.json is Json.ARRAY,
        f.one_of,
        f.max_length,
        _FULL.get(f.path),
        f.timestamp,
        f.minimum,
        f.maximum,
    )
    for f in D.FIELDS
}


def _broken(rule: Rule, value: Any) -> bool:
    array, one_of, max_length, pattern, timestamp, low, high = rule
    if array:
        value = len(value)
    return (
        bool(one_of and value not in one_of)
        or (max_length is not None and len(value) > max_length)
        or (pattern is not None and pattern.fullmatch(value) is None)
        or (timestamp and not _instant_ok(value))
        or (low is not None and value < low)
        or (high is not None and value > high)
    )


def _breaks(field: Field, value: Any) -> bool:
    """Whether a well-typed value breaks its field's rule."""
    return _broken(_RULES[field.path], value)


def _fail(field: Field, value: Any) -> InvalidEventError:
    return InvalidEventError(field.reason.replace("{value}", str(value)))


def _version(doc: dict[str, Any]) -> None:
    """Phase 3."""
    field = D.VERSION
    value = doc.get(field.name)
    if value is None:
        raise InvalidEventError(D.missing(field.path))
    if not _is(value, field.json):
        raise InvalidEventError(D.wrong_type(field.path, field.json))
    if _breaks(field, value):
        raise _fail(field, value)


def _shape(path: str, objects: list[dict[str, Any]]) -> None:
    """Phase 4 for the objects at `path` (one, or an array's elements), depth first."""
    fields, names = _CHILDREN[path]
    if not all(names.issuperset(obj) for obj in objects):
        extra = {name for obj in objects for name in obj if name not in names}
        raise InvalidEventError(D.unknown(path, min(extra)))
    for field, name, kind, integer in fields:
        values = [obj.get(name) for obj in objects]
        present = [v for v in values if v is not None]
        if field.required and len(present) < len(values):
            raise InvalidEventError(D.missing(field.path))
        for v in present:
            if type(v) is not kind or (integer and not _LONG[0] <= v <= _LONG[1]):
                raise InvalidEventError(D.wrong_type(field.path, field.json))
        if field.json is Json.OBJECT:
            _shape(field.path, present)
        elif field.json is Json.ARRAY:
            elements = [e for array in present for e in array]
            if not all(type(e) is dict for e in elements):
                raise InvalidEventError(D.wrong_type(field.elements, Json.OBJECT))
            _shape(field.elements, elements)


def _values(doc: dict[str, Any], path: str) -> list[Any]:
    """Every present value at `path` (each element's, under an array)."""
    current: list[Any] = [doc]
    for name, array in _steps(path):
        current = [obj[name] for obj in current if obj.get(name) is not None]
        if array:
            current = [e for array in current for e in array]
    return current


def _get(doc: dict[str, Any], path: str) -> Any:
    """The value at a path outside arrays (present: the shape was checked)."""
    return _values(doc, path)[0]


_VALUE_ORDER = tuple((f, _RULES[f.path]) for f in D.VALUE_ORDER)


def _check_values(doc: dict[str, Any]) -> None:
    """Phase 5."""
    for field, rule in _VALUE_ORDER:
        for value in _values(doc, field.path):
            if _broken(rule, value):
                raise _fail(field, value)


def _holds(
    relation: D.Relation,
    doc: dict[str, Any],
    key: bytes | None,
    headers: dict[str, bytes | None],
) -> bool:
    match relation:
        case D.Implies(field=field, source=source, mapping=mapping):
            return bool(_get(doc, field) == mapping.get(_get(doc, source)))
        case D.SumOfProducts(field=field, array=array, factors=(a, b)):
            return bool(_get(doc, field) == sum(e[a] * e[b] for e in _get(doc, array)))
        case D.KeyEquals(field=field, missing=missing):
            if key is None:
                raise InvalidEventError(missing)
            return bool(key == _get(doc, field).encode())
        case D.HeaderEquals(header=header, field=field):
            return bool(headers.get(header) in (None, _get(doc, field).encode()))


def _check_relations(
    doc: dict[str, Any], key: bytes | None, headers: list[tuple[str, bytes | None]] | None
) -> None:
    """Phase 6."""
    first: dict[str, bytes | None] = {}
    for name, raw in headers or []:
        first.setdefault(name, raw)  # the first header of a name counts
    for relation in D.RELATIONS:
        if not _holds(relation, doc, key, first):
            raise InvalidEventError(relation.reason)


def exact(
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]] | None,
    max_bytes: int = C.MAX_EVENT_BYTES,
) -> dict[str, Any]:
    """The exact path: the document of the v1 event in this record, or InvalidEventError with
    the first check it fails (every phase, in the definition's order)."""
    doc = _document(_text(value, max_bytes))
    _version(doc)
    _shape(D.ROOT, [doc])
    _check_values(doc)
    _check_relations(doc, key, headers)
    return doc


# The fast path (event_reader_fast): compiled from the definition with this module's own
# patterns, timestamp check and integer bounds; it accepts only what `exact` accepts.
fast = compile_reader(_FULL, _instant_ok, _LONG)


def read(
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]] | None,
    max_bytes: int = C.MAX_EVENT_BYTES,
) -> tuple[OrderEvent, dict[str, Any]]:
    """The v1 event in this record and its decoded document, or InvalidEventError with the
    first check it fails. A valid record takes the fast path; any other is decided by the
    exact one."""
    doc = fast(key, value, headers, max_bytes)
    if doc is None:
        doc = exact(key, value, headers, max_bytes)
    order = doc["order"]
    event = OrderEvent(
        event_id=doc["event_id"].lower(),
        event_type=doc["event_type"],
        occurred_at=doc["occurred_at"],
        order_id=order["id"],
        customer_id=order["customer_id"],
        currency=order["currency"],
        total_cents=order["total_cents"],
    )
    return event, doc


def parse(
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]] | None,
    max_bytes: int = C.MAX_EVENT_BYTES,
) -> OrderEvent:
    """The v1 event in this record, or InvalidEventError with the first check it fails."""
    return read(key, value, headers, max_bytes)[0]
