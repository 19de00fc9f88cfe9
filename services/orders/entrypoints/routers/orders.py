"""/orders: place an order, get one, list them."""

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query, Response

from onceflow.contract import (
    IDENTIFIER_MAX_LENGTH,
    PAGE_LIMIT_DEFAULT,
    PAGE_LIMIT_MAX,
    OrderStatus,
)
from onceflow.problems import problem_response
from services.orders.domain.order import LineItem
from services.orders.entrypoints import metrics, writes
from services.orders.entrypoints.auth import PREFIX, Reader
from services.orders.entrypoints.dependencies import PoolDep, Write
from services.orders.entrypoints.problems import ORDER_NOT_FOUND, problem_responses
from services.orders.entrypoints.schemas import IDENTIFIER_PATTERN, OrderIn, OrderOut, OrderPage
from services.orders.service_layer import services, views
from services.orders.service_layer.idempotency import PLACE_SCOPE

router = APIRouter(prefix=PREFIX, tags=["orders"])  # every path under it takes a key


@router.post(
    "",
    status_code=201,
    response_model=OrderOut,
    summary="Place an order",
    responses={
        201: {
            "description": "Order placed (or replayed)",
            "headers": {**writes.LOCATION, **writes.REPLAYED},
        },
        **writes.WRITE_ERRORS,
        **problem_responses(409),
    },
    openapi_extra=writes.HEADERS,
)
async def place_order(order: OrderIn, write: Write) -> Response:
    """Place an order; exactly once per Idempotency-Key."""
    command = services.place_command(
        client_id=write.client_id,
        key=write.key,
        customer_id=order.customer_id,
        currency=order.currency,
        items=tuple(LineItem(i.sku, i.quantity, i.unit_price_cents) for i in order.items),
        traceparent=write.traceparent,
    )
    outcome = await services.place_order(uow=write.uow, command=command)
    if outcome.kind == "created":
        metrics.ORDERS_CREATED.inc()
    return writes.respond(outcome, PLACE_SCOPE)


@router.get("/{order_id}", response_model=OrderOut, responses=problem_responses(404, 422, 500, 503))
async def get_order(order_id: UUID, pool: PoolDep, client: Reader) -> Response:
    """One of the caller's orders by id (another client's order is 404 too)."""
    body = await views.get_order(pool=pool, client_id=client.id, order_id=order_id)
    if body is None:
        return problem_response(404, ORDER_NOT_FOUND, f"order {order_id} does not exist")
    return Response(body, media_type="application/json")


@router.get("", response_model=OrderPage, responses=problem_responses(422, 500, 503))
async def list_orders(
    pool: PoolDep,
    client: Reader,
    customer_id: Annotated[
        str | None, Query(max_length=IDENTIFIER_MAX_LENGTH, pattern=IDENTIFIER_PATTERN)
    ] = None,
    status: OrderStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_LIMIT_MAX)] = PAGE_LIMIT_DEFAULT,
    cursor: Annotated[
        str | None, Query(max_length=200, description="next_cursor of a page")
    ] = None,
) -> Response:
    """The caller's orders newest first, optionally by customer and status, keyset-paginated."""
    body = await views.list_orders(
        pool=pool,
        client_id=client.id,
        customer_id=customer_id,
        status=None if status is None else status.value,
        limit=limit,
        cursor=cursor,
    )
    return Response(body, media_type="application/json")
