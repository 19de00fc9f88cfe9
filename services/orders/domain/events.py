"""The v1 event envelope of contract section 4, as published on `outbox.event.order`."""

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from services.orders.domain.order import Order
from services.orders.domain.status import EventType

SCHEMA_VERSION = 1


def iso_utc(moment: datetime) -> str:
    """UTC ISO-8601 with microseconds and 'Z', e.g. 2026-11-22T10:15:03.123456Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def order_document(order: Order) -> dict[str, Any]:
    """The order as it appears in responses and in events."""
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
