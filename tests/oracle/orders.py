"""TEST ORACLE: an independent Python model of rules that production runs in PostgreSQL.

Production builds the order document and the event envelope in SQL (orders.order_json,
orders.emit_event in migrations/sql/orders/) and enforces the state machine there, from
onceflow.contract.TRANSITIONS. Tests use this model to state what those must produce; nothing
in services/ imports it.
"""

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from onceflow.contract import SCHEMA_VERSION, TRANSITIONS, Action, EventType, OrderStatus
from services.orders.domain.order import LineItem, total_cents


class InvalidTransitionError(Exception):
    """The action is not allowed from the order's current status."""

    def __init__(self, current: OrderStatus, action: Action) -> None:
        super().__init__(f"cannot {action} an order that is {current}")
        self.current = current


def next_status(current: OrderStatus, action: Action) -> OrderStatus:
    """The status after `action`, per the contract's table, or InvalidTransitionError."""
    transition = TRANSITIONS[action]
    if current not in transition.sources:
        raise InvalidTransitionError(current, action)
    return transition.target


@dataclass(frozen=True)
class Order:
    """An order as stored and as published in events."""

    id: UUID
    customer_id: str
    currency: str
    status: OrderStatus
    items: tuple[LineItem, ...]
    created_at: datetime
    updated_at: datetime

    @property
    def total_cents(self) -> int:
        """The total the server computes."""
        return total_cents(self.items)

    def apply(self, action: Action, at: datetime) -> "Order":
        """The order after `action` at time `at`."""
        return replace(self, status=next_status(self.status, action), updated_at=at)


def iso_utc(moment: datetime) -> str:
    """UTC ISO-8601 with microseconds and 'Z', e.g. 2026-11-22T10:15:03.123456Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def order_document(order: Order) -> dict[str, Any]:
    """The order as responses and events carry it."""
    return {
        "id": str(order.id),
        "customer_id": order.customer_id,
        "currency": order.currency,
        "status": order.status.value,
        "total_cents": order.total_cents,
        "created_at": iso_utc(order.created_at),
        "updated_at": iso_utc(order.updated_at),
        "items": [
            {"sku": i.sku, "quantity": i.quantity, "unit_price_cents": i.unit_price_cents}
            for i in order.items
        ],
    }


def envelope(
    order: Order, event_type: EventType, event_id: UUID, occurred_at: datetime
) -> dict[str, Any]:
    """The event value: `order` is the order as it is after the change."""
    return {
        "event_id": str(event_id),
        "event_type": event_type.value,
        "schema_version": SCHEMA_VERSION,
        "occurred_at": iso_utc(occurred_at),
        "order": order_document(order),
    }
