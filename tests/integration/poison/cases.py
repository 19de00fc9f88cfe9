"""The records of the poison suite: every kind of bad record of the shared corpus
(tests/oracle/bad_records.py), the conflicting copy of an event id, and the corpus's unusual
valid records, each between valid events of an order of its own.

A case is produced in one Kafka transaction on one partition: its order's OrderPlaced, the
record, then the order's OrderPaid and OrderShipped (a later case: its OrderPlaced first, the
rest once both stages counted it). Each case's order has its own customer and
skus, so what the job counted for them says whether the events around that record were counted
exactly once.
"""

import json
import re
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from onceflow import contract
from tests.integration.aggregation.history import Event, Record
from tests.oracle.bad_records import FORMS, GOOD, REUSED_ID, corpus
from tests.oracle.events import Record as RawRecord

# The connector's serialization: what the topic carries in production.
FORM = FORMS["wire"]
STATUS = {e.value: s.value for e, s in contract.STATUS_AFTER.items()}

# The kinds contract section 4c and issue 21 name; the suite fails if one goes missing.
REQUIRED = (
    *(
        f"nul-in-{path}"
        for path in (
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
    ),
    "lone-high-surrogate",
    "invalid-utf8",
    "one-mb-string",
    "string-too-long-within-the-size-limit",
    "quantity-above-bound",
    "quantity-beyond-bigint",
    "price-above-bound",
    "price-beyond-bigint",
    "quantity-zero",
    "quantity-negative",
    "price-negative",
    "total-negative",
    "year-0000-occurred_at",
    "year-10000-occurred_at",
    "unknown-event-type",
    "schema-version-2",
    "key-not-order-id",
    "no-key",
    "null-value",
    "header-id-mismatch",
    "header-event-type-mismatch",
    "reused-event-id",
    "duplicate-key",
)


@dataclass(frozen=True)
class Case:
    """One record between valid events; `reason` is its dead letter's (None: it is valid)."""

    name: str
    reason: str | None
    record: Record
    partition: int
    before: list[Event] = field(default_factory=list)
    after: list[Event] = field(default_factory=list)
    later: bool = False  # produced once both stages counted the events before it

    @property
    def around(self) -> list[Event]:
        """The valid events produced around the record."""
        return [*self.before, *self.after]

    @property
    def counted(self) -> list[Event]:
        """Every event of the case the job must count: around it, and the record if valid."""
        own = [] if self.reason is not None else [as_event(self.record)]
        return [*self.before, *own, *self.after]


def iso(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def order_events(n: int, at: datetime) -> list[Event]:
    """Case n's order: placed, paid, shipped, a second apart, customer and skus its own."""
    items: list[dict[str, Any]] = [
        {"sku": f"SKU-poison-{n}-a", "quantity": 1 + n % 4, "unit_price_cents": 1250},
        {"sku": f"SKU-poison-{n}-b", "quantity": 2, "unit_price_cents": 99 * (n + 1)},
    ]
    order: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "customer_id": f"c-poison-{n}",
        "currency": contract.DEFAULT_CURRENCIES[n % len(contract.DEFAULT_CURRENCIES)],
        "status": "PLACED",
        "total_cents": sum(i["quantity"] * i["unit_price_cents"] for i in items),
        "created_at": iso(at),
        "updated_at": iso(at),
        "items": items,
    }
    events = []
    for step, event_type in enumerate(("OrderPlaced", "OrderPaid", "OrderShipped")):
        when = at + timedelta(seconds=step)
        current = {**order, "status": STATUS[event_type], "updated_at": iso(when)}
        events.append(Event(str(uuid.uuid4()), event_type, when, current))
    return events


def _raw(r: RawRecord) -> Record:
    key, value, _topic, _partition, _offset, headers = r
    return Record(key, value, list(headers))


def _instant(text: str) -> datetime:
    """An RFC 3339 time of the corpus, at microsecond precision (what the tables hold)."""
    match = re.fullmatch(r"([^.]+)(\.\d{1,6})?\d*(Z|[+-]\d\d:\d\d)", text)
    assert match is not None, text
    whole, fraction, zone = match.groups()
    return datetime.fromisoformat(whole + (fraction or "") + zone.replace("Z", "+00:00"))


def as_event(r: Record) -> Event:
    """The event a valid record carries, as the table oracle takes it."""
    assert r.value is not None
    doc = json.loads(r.value)
    return Event(doc["event_id"], doc["event_type"], _instant(doc["occurred_at"]), doc["order"])


def _reused(first: Event) -> Record:
    """A valid event on its own, with the id of `first` and other content."""
    items = [{**first.order["items"][0], "quantity": first.order["items"][0]["quantity"] + 1}]
    order = {
        **first.order,
        "items": items,
        "total_cents": items[0]["quantity"] * items[0]["unit_price_cents"],
    }
    return replace(
        first, occurred_at=first.occurred_at + timedelta(milliseconds=500), order=order
    ).record()


def build_cases(limit: int) -> list[Case]:
    """Every case, for consumers whose value limit is `limit` bytes."""
    start = datetime.now(UTC).replace(microsecond=0)
    kinds: list[tuple[str, str | None, Record | None]] = [
        (bad.name, bad.reason, _raw(bad.make(FORM))) for bad in corpus(limit)
    ]
    kinds.append(("reused-event-id", REUSED_ID, None))
    kinds.append(("reused-event-id-in-a-later-batch", REUSED_ID, None))
    kinds += [(f"valid-{name}", None, _raw(make(FORM))) for name, make in GOOD.items()]
    cases = []
    for n, (name, reason, record) in enumerate(kinds):
        placed, *rest = order_events(n, start + timedelta(seconds=3 * n))
        cases.append(
            Case(
                name,
                reason,
                record if record is not None else _reused(placed),
                partition=n % 3,
                before=[placed],
                after=rest,
                later=name.endswith("-in-a-later-batch"),
            )
        )
    return cases
