"""The writes of the order aggregate as commands: what the service layer asks the repository to
do, each under an Idempotency-Key claim."""

from dataclasses import dataclass
from uuid import UUID

from onceflow.contract import Action
from services.orders.domain import order
from services.orders.domain.order import LineItem


@dataclass(frozen=True)
class KeyClaim:
    """A client's key for one endpoint (`scope`) and the fingerprint of its request."""

    scope: str
    key: str
    fingerprint: bytes


@dataclass(frozen=True)
class PlaceOrder:
    """Place a new order (and emit OrderPlaced) unless the key was used before."""

    claim: KeyClaim
    client_id: UUID
    order_id: UUID
    event_id: UUID
    customer_id: str
    currency: str
    items: tuple[LineItem, ...]
    traceparent: str

    @property
    def total_cents(self) -> int:
        """The total the server computes from the items (a client never sets it)."""
        return order.total_cents(self.items)


@dataclass(frozen=True)
class TransitionOrder:
    """Apply `action` to an order (and emit its event) unless the key was used before."""

    claim: KeyClaim
    client_id: UUID
    order_id: UUID
    action: Action
    event_id: UUID
    traceparent: str
