"""A read-only proxy to Prometheus's HTTP API, so the page needs one origin only; it offers the
page's own reads and nothing else: the alerts, and a range query of a panel's PromQL
(`panels.offered_queries`). Any other query is 403, any other parameter 400 (problem+json).

Prometheus down or slow answers one problem+json sentence within `prometheus_timeout_s`
(the page shows "Prometheus unreachable"); Prometheus's own answers pass through unchanged.
"""

from enum import StrEnum

import httpx
from fastapi import APIRouter, Request
from starlette.responses import Response

from onceflow.problems import problem_response
from onceflow.settings import ObservabilitySettings

router = APIRouter(prefix="/api/prom", tags=["prometheus"])
UNREACHABLE = "prometheus-unreachable"


class Endpoint(StrEnum):
    """The parts of /api/v1 the page reads."""

    QUERY_RANGE = "query_range"
    ALERTS = "alerts"


# The parameters each endpoint takes from the page (a query_range's `query` must be offered).
PARAMETERS = {
    Endpoint.QUERY_RANGE: frozenset({"query", "start", "end", "step"}),
    Endpoint.ALERTS: frozenset(),
}


def refusal(endpoint: Endpoint, request: Request) -> Response | None:
    """Why the proxy does not forward this request (a problem), or None when it does."""
    given = [name for name, _ in request.query_params.multi_items()]
    unknown = sorted(set(given) - PARAMETERS[endpoint])
    if unknown or len(given) != len(set(given)):
        detail = f"/api/prom/{endpoint.value} takes {sorted(PARAMETERS[endpoint])} once each"
        return problem_response(400, "parameter-not-offered", detail)
    offered: frozenset[str] = request.app.state.offered_queries
    query = request.query_params.get("query")
    if endpoint is Endpoint.QUERY_RANGE and query not in offered:
        detail = "the dashboard runs only its panels' queries (services/dashboard/panels.py)"
        return problem_response(403, "query-not-offered", detail)
    return None


@router.get("/{endpoint}")
async def proxy(endpoint: Endpoint, request: Request) -> Response:
    """GET Prometheus's /api/v1/{endpoint} with the same query string, if the page's own."""
    refused = refusal(endpoint, request)
    if refused is not None:
        return refused
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
