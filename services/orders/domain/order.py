"""Order lines and the server-computed total (request validation is the API models' job,
from onceflow.contract; the order document itself is built by the database)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class LineItem:
    """`quantity` units of `sku` at `unit_price_cents` each (integer minor units)."""

    sku: str
    quantity: int
    unit_price_cents: int

    @property
    def subtotal_cents(self) -> int:
        """Quantity times unit price."""
        return self.quantity * self.unit_price_cents


def total_cents(items: tuple[LineItem, ...]) -> int:
    """The order total: the sum of the line subtotals."""
    return sum(item.subtotal_cents for item in items)
