"""What a valid v1 order event is (contract sections 4 and 4c): the ONE definition.

Every reader derives its checks from the declarations below by code, so all readers agree on
every record: the Python reader (onceflow.events, used by the notifications processor) and the
Spark parser (spark_jobs/aggregation/parse.py, its StructType in schema.py). A record's
dead-letter reason is the first check it fails, in this order of phases:

1. RAW: the value is present, at most the reader's byte limit, UTF-8, and its raw text escapes
   no lone surrogate and no U+0000 (JSON can only carry those as `\\u` escapes).
2. SYNTAX: the text is exactly one strict JSON value (JSON_LIMITS), an object, whose objects
   have no duplicate keys.
3. VERSION: `schema_version` is present, an integer, and SCHEMA_VERSION.
4. SHAPE: depth first in FIELDS order, each object has no field the table does not declare
   (UNKNOWN names the smallest), then each of its fields is present, not null, and of its JSON
   type (an array's elements are objects).
5. VALUES: each field's rule (enumeration, length and pattern, timestamp, bounds), gates first.
6. RELATIONS: rules between fields, the record's key and its headers.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum

from onceflow import contract as C  # noqa: N812


class Json(Enum):
    """A field's JSON type, named as the reason names it."""

    STRING = "a string"
    INTEGER = "an integer within 64 bits"
    OBJECT = "an object"
    ARRAY = "an array"


@dataclass(frozen=True, slots=True, kw_only=True)
class Field:
    """One declared field of the event and the rule its value must meet.

    `path` is dotted from the event's root; `[]` marks an array's elements
    (`order.items[].sku`). For an array, `minimum`/`maximum` bound its number of elements.
    `reason` is the dead letter's reason when the value breaks the rule; `{value}` in it is
    replaced by the value.
    """

    path: str
    json: Json
    required: bool = True
    one_of: tuple[str, ...] = ()
    max_length: int | None = None
    pattern: str | None = None  # an unanchored contract pattern the whole text must match
    timestamp: bool = False  # an RFC 3339 time whose instant lies within years MIN..MAX_YEAR
    minimum: int | None = None
    maximum: int | None = None
    gate: bool = False  # says which rules apply: its value is checked before the others'
    reason: str = ""

    @property
    def parent(self) -> str:
        """The path of the object that holds this field ("" for the root)."""
        return self.path.rpartition(".")[0]

    @property
    def name(self) -> str:
        """The field's key in its object."""
        return self.path.rpartition(".")[2]

    @property
    def elements(self) -> str:
        """The path of an array's elements."""
        return f"{self.path}[]"

    @property
    def has_rule(self) -> bool:
        """Whether the value has a rule beyond its JSON type."""
        return bool(self.one_of or self.pattern or self.timestamp) or (
            self.minimum is not None or self.maximum is not None
        )


_EVENT_TYPES = tuple(e.value for e in C.EventType)
_STATUSES = tuple(s.value for s in C.OrderStatus)
# The instants a timestamp may name (phase 5): within the contract's years, in UTC.
EARLIEST = datetime(C.MIN_YEAR, 1, 1, tzinfo=UTC)
LATEST = datetime(C.MAX_YEAR, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)


_TIME = f"is not an RFC 3339 time with a zone in years {C.MIN_YEAR}..{C.MAX_YEAR}"


def _string(
    path: str, pattern: str, max_length: int, reason: str, *, timestamp: bool = False
) -> Field:
    """A string field whose whole text matches `pattern`."""
    return Field(
        path=path,
        json=Json.STRING,
        max_length=max_length,
        pattern=pattern,
        timestamp=timestamp,
        reason=reason,
    )


# The event's fields in the contract's document order (section 4).
FIELDS: tuple[Field, ...] = (
    _string("event_id", C.UUID, C.UUID_LENGTH, "event_id is not a UUID"),
    Field(
        path="event_type",
        json=Json.STRING,
        one_of=_EVENT_TYPES,
        gate=True,
        reason="unknown event_type {value}",
    ),
    Field(
        path="schema_version",
        json=Json.INTEGER,
        minimum=C.SCHEMA_VERSION,
        maximum=C.SCHEMA_VERSION,
        gate=True,
        reason="unsupported schema_version {value}",
    ),
    _string(
        "occurred_at",
        C.TIMESTAMP,
        C.TIMESTAMP_MAX_LENGTH,
        f"occurred_at {_TIME}",
        timestamp=True,
    ),
    Field(path="order", json=Json.OBJECT),
    _string("order.id", C.UUID, C.UUID_LENGTH, "order.id is not a UUID"),
    _string(
        "order.customer_id",
        C.IDENTIFIER,
        C.IDENTIFIER_MAX_LENGTH,
        "invalid order.customer_id",
    ),
    _string("order.currency", C.CURRENCY, C.CURRENCY_LENGTH, "invalid order.currency"),
    Field(
        path="order.status",
        json=Json.STRING,
        one_of=_STATUSES,
        reason="unknown order.status {value}",
    ),
    Field(
        path="order.total_cents",
        json=Json.INTEGER,
        minimum=0,
        maximum=C.MAX_TOTAL_CENTS,
        reason=f"order.total_cents outside 0..{C.MAX_TOTAL_CENTS}",
    ),
    _string(
        "order.created_at",
        C.TIMESTAMP,
        C.TIMESTAMP_MAX_LENGTH,
        f"order.created_at {_TIME}",
        timestamp=True,
    ),
    _string(
        "order.updated_at",
        C.TIMESTAMP,
        C.TIMESTAMP_MAX_LENGTH,
        f"order.updated_at {_TIME}",
        timestamp=True,
    ),
    Field(
        path="order.items",
        json=Json.ARRAY,
        minimum=C.MIN_ITEMS,
        maximum=C.MAX_ITEMS,
        reason=f"order.items must have {C.MIN_ITEMS}..{C.MAX_ITEMS} items",
    ),
    _string(
        "order.items[].sku",
        C.IDENTIFIER,
        C.IDENTIFIER_MAX_LENGTH,
        "invalid order.items[].sku",
    ),
    Field(
        path="order.items[].quantity",
        json=Json.INTEGER,
        minimum=C.MIN_QUANTITY,
        maximum=C.MAX_QUANTITY,
        reason=f"order.items[].quantity outside {C.MIN_QUANTITY}..{C.MAX_QUANTITY}",
    ),
    Field(
        path="order.items[].unit_price_cents",
        json=Json.INTEGER,
        minimum=C.MIN_UNIT_PRICE_CENTS,
        maximum=C.MAX_UNIT_PRICE_CENTS,
        reason=(
            "order.items[].unit_price_cents outside "
            f"{C.MIN_UNIT_PRICE_CENTS}..{C.MAX_UNIT_PRICE_CENTS}"
        ),
    ),
)
BY_PATH: dict[str, Field] = {f.path: f for f in FIELDS}
VERSION = BY_PATH["schema_version"]  # phase 3: checked before the event is read as v1
ROOT = ""


def children(obj: str) -> tuple[Field, ...]:
    """The fields of the object at path `obj`, in FIELDS order."""
    return tuple(f for f in FIELDS if f.parent == obj)


def nested(field: Field) -> str | None:
    """The object path a field holds (an object, or an array's elements), else None."""
    if field.json is Json.OBJECT:
        return field.path
    return field.elements if field.json is Json.ARRAY else None


def wire_order(fields: tuple[Field, ...]) -> tuple[Field, ...]:
    """`fields` in the order PostgreSQL's jsonb keeps keys (shorter first, then bytewise):
    the order of the records the connector writes (the JSON the outbox row holds)."""
    return tuple(sorted(fields, key=lambda f: (len(f.name.encode()), f.name.encode())))


# Phase 5's order: VERSION, the other gates (what kind of event it is), then the others in
# FIELDS order. (VERSION holds here once phase 3 passed; a reader may skip phase 3 on a record
# it knows to be well-formed, not VERSION's rule.)
VALUE_ORDER: tuple[Field, ...] = (
    VERSION,
    *(f for f in sorted(FIELDS, key=lambda f: not f.gate) if f.has_rule and f is not VERSION),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Implies:
    """`field`'s value is `mapping[source's value]`."""

    field: str
    source: str
    mapping: Mapping[str, str]
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SumOfProducts:
    """`field` equals the sum over `array`'s elements of the product of their `factors`."""

    field: str
    array: str
    factors: tuple[str, str]
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyEquals:
    """The record's key is present (`missing`) and is `field`'s value as UTF-8 (`reason`)."""

    field: str
    missing: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderEquals:
    """The first header called `header`, when present and not null, is `field`'s value."""

    header: str
    field: str
    reason: str


Relation = Implies | SumOfProducts | KeyEquals | HeaderEquals

# Phase 6, in order. order.id is a UUID (phase 5), so a key equal to it is the order's UUID.
RELATIONS: tuple[Relation, ...] = (
    Implies(
        field="order.status",
        source="event_type",
        mapping={e.value: s.value for e, s in C.STATUS_AFTER.items()},
        reason="order.status does not match event_type",
    ),
    SumOfProducts(
        field="order.total_cents",
        array="order.items",
        factors=("quantity", "unit_price_cents"),
        reason="order.total_cents is not the sum of its items",
    ),
    KeyEquals(field="order.id", missing="missing key", reason="key does not match order.id"),
    HeaderEquals(header="id", field="event_id", reason="header id does not match event_id"),
    HeaderEquals(
        header="eventType",
        field="event_type",
        reason="header eventType does not match event_type",
    ),
)


@dataclass(frozen=True, slots=True)
class JsonLimits:
    """Strict JSON (RFC 8259: no NaN, comments, leading zeros or raw control characters in
    strings) within the limits of Jackson's defaults, which Spark's JSON functions apply."""

    max_depth: int = 999  # Jackson's 1000 nesting levels, less one: Spark wraps the value once
    max_number_digits: int = 1000  # digits of one number, sign, point and exponent mark aside
    whitespace: str = " \t\n\r"


JSON_LIMITS = JsonLimits()

# Phase 1 on the raw text: each escaped backslash (`\\`) becomes ESCAPED_BACKSLASH[1] first, so
# every backslash left starts an escape, then these must not be found. Only a text containing
# ESCAPE_MARK can match.
ESCAPE_MARK = "\\u"
ESCAPED_BACKSLASH = (r"\\\\", "_")
_HIGH, _LOW = r"\\u[dD][89abAB][0-9a-fA-F]{2}", r"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
LONE_SURROGATE = rf"{_HIGH}(?!{_LOW})|(?<!{_HIGH}){_LOW}"
NUL = r"\\u0000"

TOMBSTONE = "empty value (tombstone)"
OVERSIZED = "oversized: {size} bytes > {max}"
NOT_UTF8 = "value is not UTF-8 text"
HAS_LONE_SURROGATE = "value has a lone surrogate escape (not valid Unicode)"
HAS_NUL = "value has a string with U+0000"
NOT_JSON = "value is not JSON"
NOT_OBJECT = "value is not a JSON object"
DUPLICATE_KEY = "value has a duplicate key in a JSON object"
UNKNOWN = "unknown field {path}"
MISSING = "missing field {path}"
WRONG_TYPE = "wrong JSON type: {path} must be {json}"
# Not a check of one record: a valid event whose id was counted with other content (4c).
REUSED_ID = "event id reused with different content"


def unknown(obj: str, name: str) -> str:
    """UNKNOWN for key `name` of the object at path `obj`."""
    return UNKNOWN.format(path=f"{obj}.{name}" if obj else name)


def missing(path: str) -> str:
    """MISSING for the field at `path`."""
    return MISSING.format(path=path)


def wrong_type(path: str, json: Json) -> str:
    """WRONG_TYPE for the field (or array elements) at `path`."""
    return WRONG_TYPE.format(path=path, json=json.value)


def oversized(size: int, limit: int) -> str:
    """OVERSIZED for a value of `size` bytes."""
    return OVERSIZED.format(size=size, max=limit)
