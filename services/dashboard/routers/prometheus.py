"""A read-only proxy to Prometheus's HTTP API, so the page needs one origin only.

Prometheus down or slow answers one problem+json sentence within `prometheus_timeout_s`
(the page shows "Prometheus unreachable"); Prometheus's own answers pass through unchanged.
"""

from enum import StrEnum

import httpx
from fastapi import APIRouter, Request
from starlette.responses import Response

from onceflow.settings import ObservabilitySettings
from services.orders.entrypoints.problems import problem_response

router = APIRouter(prefix="/api/prom", tags=["prometheus"])
UNREACHABLE = "prometheus-unreachable"


class Endpoint(StrEnum):
    """The parts of /api/v1 the page reads."""

    QUERY = "query"
    QUERY_RANGE = "query_range"
    ALERTS = "alerts"
    TARGETS = "targets"


@router.get("/{endpoint}")
async def proxy(endpoint: Endpoint, request: Request) -> Response:
    """GET Prometheus's /api/v1/{endpoint} with the same query string."""
    obs: ObservabilitySettings = request.app.state.obs
    client: httpx.AsyncClient = request.app.state.prometheus
    where = obs.prometheus_url
    try:
        answer = await client.get(f"/api/v1/{endpoint.value}", params=request.query_params)
    except httpx.TimeoutException:
        waited = obs.prometheus_timeout_s
        detail = f"Prometheus unreachable: {where} did not answer within {waited:g} s"
        return problem_response(504, UNREACHABLE, detail)
    except httpx.TransportError as exc:
        detail = f"Prometheus unreachable at {where}: {exc or type(exc).__name__}"
        return problem_response(502, UNREACHABLE, detail)
    content_type = answer.headers.get("content-type", "application/json")
    if "json" not in content_type:
        detail = f"Prometheus at {where} answered {answer.status_code} with {content_type}"
        return problem_response(502, UNREACHABLE, detail)
    return Response(answer.content, answer.status_code, media_type=content_type)
