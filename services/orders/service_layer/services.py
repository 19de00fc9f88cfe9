"""Use cases of the order API: small keyword-only functions over a unit of work."""

from uuid import UUID

from onceflow.contract import Action
from services.orders.domain.commands import PlaceOrder, TransitionOrder
from services.orders.domain.ids import uuid7
from services.orders.domain.order import LineItem
from services.orders.domain.outcomes import IdempotencyKeyReusedError, Outcome
from services.orders.service_layer.idempotency import PLACE_SCOPE, claim, transition_scope
from services.orders.service_layer.unit_of_work import UnitOfWork


def place_command(
    *,
    client_id: UUID,
    key: str,
    customer_id: str,
    currency: str,
    items: tuple[LineItem, ...],
    traceparent: str,
) -> PlaceOrder:
    """POST /orders as a command: new ids, the key claimed with the request's fingerprint."""
    request = {"customer_id": customer_id, "currency": currency, "items": [vars(i) for i in items]}
    return PlaceOrder(
        claim=claim(PLACE_SCOPE, key, request, client_id=client_id),
        client_id=client_id,
        order_id=uuid7(),
        event_id=uuid7(),
        customer_id=customer_id,
        currency=currency,
        items=items,
        traceparent=traceparent,
    )


def transition_command(
    *, client_id: UUID, key: str, order_id: UUID, action: Action, traceparent: str
) -> TransitionOrder:
    """POST /orders/{id}/<action> as a command; the fingerprint is the order id."""
    request = {"order_id": str(order_id)}
    return TransitionOrder(
        claim=claim(transition_scope(action), key, request, client_id=client_id),
        client_id=client_id,
        order_id=order_id,
        action=action,
        event_id=uuid7(),
        traceparent=traceparent,
    )


async def place_order(*, uow: UnitOfWork, command: PlaceOrder) -> Outcome:
    """Place an order once per Idempotency-Key; replays return the first answer."""
    async with uow:
        outcome = await uow.orders.place(command)
        await uow.commit()
    return _checked(outcome)


async def transition_order(*, uow: UnitOfWork, command: TransitionOrder) -> Outcome:
    """Apply pay/ship/cancel once per Idempotency-Key; 404/409 answers are stored too."""
    async with uow:
        outcome = await uow.orders.transition(command)
        await uow.commit()
    return _checked(outcome)


def _checked(outcome: Outcome) -> Outcome:
    if outcome.kind == "mismatch":
        raise IdempotencyKeyReusedError
    return outcome
