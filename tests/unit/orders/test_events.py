"""The test oracle's v1 envelope (contract section 4) and its timestamp format: what the SQL
functions must produce (tests/integration/orders/test_outbox_wal.py compares them)."""

from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID

from onceflow.contract import EventType, OrderStatus
from services.orders.domain.order import LineItem
from tests.oracle.orders import Order, envelope, iso_utc

T0 = datetime(2026, 11, 22, 10, 15, 3, 123456, tzinfo=UTC)
ORDER_ID = UUID("01a20114-a2ad-7eaf-9c28-f79e39388b5a")
EVENT_ID = UUID("01a20114-a2ad-7eaf-9c28-f79e39388b5b")


def test_iso_utc_has_microseconds_and_z() -> None:
    assert iso_utc(T0) == "2026-11-22T10:15:03.123456Z"
    assert iso_utc(T0.replace(microsecond=0)) == "2026-11-22T10:15:03.000000Z"
    plus_two = T0.astimezone(timezone(timedelta(hours=2)))
    assert iso_utc(plus_two) == "2026-11-22T10:15:03.123456Z"


def test_envelope_matches_the_contract() -> None:
    order = Order(ORDER_ID, "c-42", "EUR", OrderStatus.PAID, (LineItem("SKU-1", 2, 1250),), T0, T0)
    later = T0 + timedelta(milliseconds=5)
    event = envelope(order, EventType.PAID, EVENT_ID, later)
    assert event == {
        "event_id": str(EVENT_ID),
        "event_type": "OrderPaid",
        "schema_version": 1,
        "occurred_at": "2026-11-22T10:15:03.128456Z",
        "order": {
            "id": str(ORDER_ID),
            "customer_id": "c-42",
            "currency": "EUR",
            "status": "PAID",
            "total_cents": 2500,
            "created_at": "2026-11-22T10:15:03.123456Z",
            "updated_at": "2026-11-22T10:15:03.123456Z",
            "items": [{"sku": "SKU-1", "quantity": 2, "unit_price_cents": 1250}],
        },
    }
