"""One order's journey: API commit -> Kafka offsets -> the micro-batch -> the notification."""

import logging
import re
from typing import Any
from uuid import UUID

import anyio
import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from onceflow import contract
from onceflow.problems import problem_response
from services.dashboard.journeys import JourneyLookup

router = APIRouter(prefix="/api/journey", tags=["journey"])
log = logging.getLogger("onceflow.dashboard")
_ORDER_ID = re.compile(rf"\A(?:{contract.UUID})\Z")
# The lookup reads Postgres and Kafka; past this the page says so instead of waiting.
TIMEOUT_S = 15.0
EXAMPLE_ID = "0193a4b2-7c1d-7e3f-9a2b-3c4d5e6f7a8b"


@router.get("/{order_id}")
async def order_journey(order_id: str, request: Request) -> Response:
    """The order's hops as JSON; 422 for an id that is not a UUID, 404 for an unknown order."""
    if not _ORDER_ID.match(order_id):
        detail = f"an order id is a UUID ({EXAMPLE_ID}), not {order_id[:80]!r}"
        return problem_response(422, "invalid-order-id", detail)
    lookup: JourneyLookup = request.app.state.lookup
    try:
        with anyio.fail_after(TIMEOUT_S):
            found: dict[str, Any] | None = await anyio.to_thread.run_sync(
                lookup, UUID(order_id), abandon_on_cancel=True
            )
    except TimeoutError:
        detail = f"the journey lookup did not finish within {TIMEOUT_S:g} s"
        return problem_response(504, "journey-timeout", detail)
    except Exception as exc:  # the lookup's stores are down: say which, keep serving
        log.warning("journey of %s failed: %s", order_id, exc)
        detail = f"the journey could not be read: {type(exc).__name__}: {exc}"
        return problem_response(503, "journey-unavailable", detail[:500])
    if found is None:
        return problem_response(404, "order-not-found", f"no order {order_id}")
    return Response(orjson.dumps(found, default=str), media_type="application/json")
