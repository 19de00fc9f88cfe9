"""The contract's vocabulary and limits (docs/contract.md, v1.2), in one place.

The API's request models, the Spark job's parser, the notifications processor and the tests
derive from these names. The migrations' CHECK constraints keep literal copies (a migration
must mean the same forever); tests/integration/schema/test_contract_bounds.py compares them.
Patterns are unanchored bodies: each consumer anchors them in its own regex dialect (Python
`\\A...\\Z`, JSON Schema / Rust `^...$`, Java `^...\\z`).
"""

from dataclasses import dataclass
from enum import StrEnum

SCHEMA_VERSION = 1  # schema_version of every event this code writes and accepts


class OrderStatus(StrEnum):
    """Where an order is in its life."""

    PLACED = "PLACED"
    PAID = "PAID"
    SHIPPED = "SHIPPED"
    CANCELLED = "CANCELLED"


class Action(StrEnum):
    """A state change a client can ask for: POST /orders/{id}/<action>."""

    PAY = "pay"
    SHIP = "ship"
    CANCEL = "cancel"


class Scope(StrEnum):
    """What an API key allows: `orders:write` (place and transitions), `orders:read` (reads)."""

    WRITE = "orders:write"
    READ = "orders:read"


class EventType(StrEnum):
    """The event each change emits on `outbox.event.order`."""

    PLACED = "OrderPlaced"
    PAID = "OrderPaid"
    SHIPPED = "OrderShipped"
    CANCELLED = "OrderCancelled"


@dataclass(frozen=True)
class Transition:
    """One allowed change: from any of `sources` to `target`, announced as `event_type`."""

    sources: frozenset[OrderStatus]
    target: OrderStatus
    event_type: EventType


# The state machine: PLACED→PAID→SHIPPED, and PLACED|PAID→CANCELLED. Production passes these
# to orders.transition_order, which checks them under the order's row lock.
TRANSITIONS: dict[Action, Transition] = {
    Action.PAY: Transition(frozenset({OrderStatus.PLACED}), OrderStatus.PAID, EventType.PAID),
    Action.SHIP: Transition(frozenset({OrderStatus.PAID}), OrderStatus.SHIPPED, EventType.SHIPPED),
    Action.CANCEL: Transition(
        frozenset({OrderStatus.PLACED, OrderStatus.PAID}),
        OrderStatus.CANCELLED,
        EventType.CANCELLED,
    ),
}

# The order's status after each event, and its rank among one order's events (picks the
# latest of two events that share an occurred_at).
STATUS_AFTER: dict[EventType, OrderStatus] = {
    EventType.PLACED: OrderStatus.PLACED,
    EventType.PAID: OrderStatus.PAID,
    EventType.SHIPPED: OrderStatus.SHIPPED,
    EventType.CANCELLED: OrderStatus.CANCELLED,
}
STATUS_RANK: dict[OrderStatus, int] = {
    OrderStatus.PLACED: 0,
    OrderStatus.PAID: 1,
    OrderStatus.SHIPPED: 2,
    OrderStatus.CANCELLED: 2,
}

# Notification kinds of contract section 4b, one per event type.
NOTIFICATION_KIND: dict[EventType, str] = {
    EventType.PLACED: "order_confirmed",
    EventType.PAID: "payment_received",
    EventType.SHIPPED: "order_shipped",
    EventType.CANCELLED: "order_cancelled",
}

DEFAULT_CURRENCIES = ("EUR", "USD", "GBP", "JPY", "CHF")  # ISO 4217 allow-list default

IDENTIFIER_MAX_LENGTH = 64
IDENTIFIER = r"[A-Za-z0-9._:-]{1,64}"  # customer_id and sku
CURRENCY = r"[A-Z]{3}"
CURRENCY_LENGTH = 3
UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# RFC 3339 with a zone, years 2000-9999, offsets within +-18:00 (what Java's ZoneOffset holds).
TIMESTAMP = (
    r"[2-9]\d{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
    r"T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?"
    r"(?:Z|[+-](?:(?:0\d|1[0-7]):[0-5]\d|18:00))"
)
TIMESTAMP_MAX_LENGTH = len("2026-11-22T10:15:03.123456789+01:00")
MIN_YEAR, MAX_YEAR = 2000, 9999  # of every timestamp's instant in UTC (Postgres and Spark hold it)
UUID_LENGTH = 36
IDEMPOTENCY_KEY_MAX_LENGTH = 255
IDEMPOTENCY_KEY = r"[\x20-\x7e]{1,255}"  # printable ASCII

MIN_ITEMS, MAX_ITEMS = 1, 100
MIN_QUANTITY, MAX_QUANTITY = 1, 10_000
MIN_UNIT_PRICE_CENTS, MAX_UNIT_PRICE_CENTS = 0, 100_000_000
MAX_TOTAL_CENTS = MAX_ITEMS * MAX_QUANTITY * MAX_UNIT_PRICE_CENTS

PAGE_LIMIT_MAX, PAGE_LIMIT_DEFAULT = 200, 50

# Readers treat a larger record value as a dead letter ("oversized"); settings may lower it.
MAX_EVENT_BYTES = 256 * 1024

# notification_id = uuid5(NOTIFICATION_NAMESPACE, event_id): consumers can recompute and
# de-duplicate it (contract section 4b). Never change it: ids already sent would not match.
NOTIFICATION_NAMESPACE = "6f1c2a9e-4b7d-5e0a-9c3f-0d1e2f3a4b5c"
