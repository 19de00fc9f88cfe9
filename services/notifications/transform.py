"""Pure: one input record -> the notification it announces, or the dead letter it becomes."""

import hashlib
import uuid
from dataclasses import dataclass

import orjson

from onceflow import contract as C  # noqa: N812
from onceflow.events import InvalidEventError, OrderEvent, read
from services.notifications.fingerprint import of_document

NAMESPACE = uuid.UUID(C.NOTIFICATION_NAMESPACE)
_NAMESPACE_SHA1 = hashlib.sha1(NAMESPACE.bytes)  # noqa: S324 - UUIDv5 is SHA-1 by definition
# Display only: minor units per major unit (ISO 4217 exponent); the contract's default
# currencies are all 2 but JPY.
_EXPONENT = {"JPY": 0}
_SENTENCE = {
    C.EventType.PLACED: "Your order {order} is confirmed: {total}.",
    C.EventType.PAID: "We received your payment of {total} for order {order}.",
    C.EventType.SHIPPED: "Your order {order} ({total}) has shipped.",
    C.EventType.CANCELLED: "Your order {order} ({total}) was cancelled.",
}
# Per event type as the event writes it: the notification's kind and sentence.
_BY_TYPE = {kind.value: (C.NOTIFICATION_KIND[kind], _SENTENCE[kind]) for kind in C.EventType}
Headers = list[tuple[str, str | bytes | None]]


# Record and Notification are built once per event: plain slotted dataclasses (a frozen one's
# __init__ sets each field through object.__setattr__, about twice the cost).
@dataclass(slots=True)
class Record:
    """What the processor read: one Kafka record of the order-event topic."""

    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    partition: int
    offset: int


@dataclass(slots=True)
class Notification:
    """A record for the notifications topic, announcing `event`."""

    event: OrderEvent
    key: bytes
    value: bytes
    headers: Headers
    content: str  # the event's content fingerprint (fingerprint.py), in hex


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A record for the dead-letter topic: the raw input and why it is not a v1 event."""

    key: bytes | None
    value: bytes | None
    headers: Headers


def amount(total_cents: int, currency: str) -> str:
    """`2600, "EUR"` -> `"26.00 EUR"` (the currency's own number of decimals)."""
    exponent = _EXPONENT.get(currency, 2)
    major, minor = divmod(total_cents, 10**exponent)
    return f"{major}.{minor:0{exponent}d} {currency}" if exponent else f"{major} {currency}"


def notification_id(event_id: str) -> str:
    """The notification's id: UUIDv5 of the event id, the same on every run (RFC 9562 5.5,
    without building UUID objects: this runs once per event)."""
    sha1 = _NAMESPACE_SHA1.copy()
    sha1.update(event_id.encode())
    digest = bytearray(sha1.digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def notify(event: OrderEvent, content: str) -> Notification:
    """The notification of a valid event (contract section 4b)."""
    kind, sentence = _BY_TYPE[event.event_type]
    nid = notification_id(event.event_id)
    total = amount(event.total_cents, event.currency)
    doc = {
        "notification_id": nid,
        "event_id": event.event_id,
        "order_id": event.order_id,
        "customer_id": event.customer_id,
        "kind": kind,
        "message": sentence.format(order=event.order_id, total=total),
        "occurred_at": event.occurred_at,
    }
    headers: Headers = [("id", nid.encode()), ("eventId", event.event_id.encode())]
    return Notification(event, event.customer_id.encode(), orjson.dumps(doc), headers, content)


def dead_letter(record: Record, reason: str) -> DeadLetter:
    """The dead letter of `record`: the raw record, why, and where it was read."""
    headers: Headers = [
        ("error", reason.encode()),
        ("sourcePartition", str(record.partition).encode()),
        ("sourceOffset", str(record.offset).encode()),
    ]
    return DeadLetter(record.key, record.value, headers)


def route(record: Record, max_bytes: int) -> Notification | DeadLetter:
    """The record's notification, or its dead letter when it is not a valid v1 event."""
    try:
        event, doc = read(record.key, record.value, record.headers, max_bytes)
    except InvalidEventError as error:
        return dead_letter(record, str(error))
    return notify(event, of_document(doc).hex())
