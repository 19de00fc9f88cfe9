"""Use cases of the order API: small keyword-only functions over a unit of work."""

from uuid import UUID

from onceflow.contract import Action
from services.orders.domain.commands import PlaceOrder, TransitionOrder
from services.orders.domain.ids import uuid7
from services.orders.domain.order import LineItem
from services.orders.domain.outcomes import IdempotencyKeyReusedError, Outcome
from services.orders.service_layer.idempotency import PLACE_SCOPE, claim, transition_scope
from services.orders.service_layer.unit_of_work import UnitOfWork


def _checked(outcome: Outcome) -> Outcome:
    if outcome.kind == "mismatch":
        raise IdempotencyKeyReusedError
    return outcome


async def place_order(
    *,
    uow: UnitOfWork,
    key: str,
    customer_id: str,
    currency: str,
    items: tuple[LineItem, ...],
    traceparent: str,
) -> Outcome:
    """Place an order once per Idempotency-Key; replays return the first answer."""
    request = {"customer_id": customer_id, "currency": currency, "items": [vars(i) for i in items]}
    command = PlaceOrder(
        claim=claim(PLACE_SCOPE, key, request),
        order_id=uuid7(),
        event_id=uuid7(),
        customer_id=customer_id,
        currency=currency,
        items=items,
        traceparent=traceparent,
    )
    async with uow:
        outcome = await uow.orders.place(command)
        await uow.commit()
    return _checked(outcome)


async def transition_order(
    *, uow: UnitOfWork, key: str, order_id: UUID, action: Action, traceparent: str
) -> Outcome:
    """Apply pay/ship/cancel once per Idempotency-Key; 404/409 answers are stored too."""
    command = TransitionOrder(
        claim=claim(transition_scope(action), key, {"order_id": str(order_id)}),
        order_id=order_id,
        action=action,
        event_id=uuid7(),
        traceparent=traceparent,
    )
    async with uow:
        outcome = await uow.orders.transition(command)
        await uow.commit()
    return _checked(outcome)
