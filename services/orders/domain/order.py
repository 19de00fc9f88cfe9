"""The order aggregate: line items, the server-computed total and the rules of the contract."""

import re
from dataclasses import dataclass, replace
from datetime import datetime
from uuid import UUID

from services.orders.domain.status import Action, OrderStatus, next_status

IDENTIFIER = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
MAX_ITEMS = 100
MAX_QUANTITY = 10_000
MAX_UNIT_PRICE_CENTS = 100_000_000


class InvalidOrderError(ValueError):
    """An order that breaks a rule of the contract."""


@dataclass(frozen=True)
class LineItem:
    """`quantity` units of `sku` at `unit_price_cents` each (integer minor units)."""

    sku: str
    quantity: int
    unit_price_cents: int

    def __post_init__(self) -> None:
        if not IDENTIFIER.match(self.sku):
            raise InvalidOrderError(f"sku {self.sku!r} must be 1-64 of [A-Za-z0-9._:-]")
        if not 1 <= self.quantity <= MAX_QUANTITY:
            raise InvalidOrderError(f"quantity must be 1-{MAX_QUANTITY}")
        if not 0 <= self.unit_price_cents <= MAX_UNIT_PRICE_CENTS:
            raise InvalidOrderError(f"unit_price_cents must be 0-{MAX_UNIT_PRICE_CENTS}")

    @property
    def subtotal_cents(self) -> int:
        """Quantity times unit price."""
        return self.quantity * self.unit_price_cents


def total_cents(items: tuple[LineItem, ...]) -> int:
    """The order total: the sum of the line subtotals."""
    return sum(item.subtotal_cents for item in items)


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

    def __post_init__(self) -> None:
        if not IDENTIFIER.match(self.customer_id):
            raise InvalidOrderError("customer_id must be 1-64 of [A-Za-z0-9._:-]")
        if not 1 <= len(self.items) <= MAX_ITEMS:
            raise InvalidOrderError(f"an order has 1-{MAX_ITEMS} items")

    @property
    def total_cents(self) -> int:
        """The server-computed total of the order."""
        return total_cents(self.items)

    def apply(self, action: Action, at: datetime) -> "Order":
        """Return the order after `action` at time `at`; raises InvalidTransitionError."""
        return replace(self, status=next_status(self.status, action), updated_at=at)
