"""/orders/{order_id}/pay, /ship and /cancel: the state machine's transitions."""

from uuid import UUID

from fastapi import APIRouter, Response

from onceflow.contract import Action
from services.orders.entrypoints import metrics, writes
from services.orders.entrypoints.auth import PREFIX
from services.orders.entrypoints.dependencies import NoBody, Write
from services.orders.entrypoints.problems import problem_responses
from services.orders.entrypoints.schemas import OrderOut
from services.orders.service_layer import services
from services.orders.service_layer.idempotency import transition_scope

router = APIRouter(prefix=PREFIX, tags=["orders"])  # every path under it takes a key


def _add_transition(action: Action) -> None:
    scope = transition_scope(action)

    async def transition(order_id: UUID, write: Write) -> Response:
        command = services.transition_command(
            client_id=write.client_id,
            key=write.key,
            order_id=order_id,
            action=action,
            traceparent=write.traceparent,
        )
        outcome = await services.transition_order(uow=write.uow, command=command)
        if outcome.kind == "rejected":
            metrics.TRANSITIONS_REJECTED.labels(action.value).inc()
        return writes.respond(outcome, scope)

    transition.__doc__ = f"{action.value.capitalize()} an order; 409 if its status forbids it."
    router.add_api_route(
        f"/{{order_id}}/{action.value}",
        transition,
        methods=["POST"],
        name=f"{action.value}_order",
        summary=f"{action.value.capitalize()} an order",
        response_model=OrderOut,
        dependencies=[NoBody],
        responses={
            200: {
                "description": "The order after the change (or replayed)",
                "headers": writes.REPLAYED,
            },
            **writes.replayable(problem_responses(404, 409)),
            **writes.WRITE_ERRORS,
        },
        openapi_extra=writes.HEADERS,
    )


for _action in Action:
    _add_transition(_action)
