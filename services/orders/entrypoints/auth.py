"""The API key of every /orders request: 401 without a live key, 403 without the scope the
route needs, 429 over the client's rate. The bearer scheme is FastAPI's, so OpenAPI shows it."""

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from onceflow.contract import Scope
from onceflow.settings import ApiSettings
from services.orders.domain.api_keys import Client, well_formed
from services.orders.domain.rate_limit import RateLimiter
from services.orders.entrypoints.problems import insufficient_scope, rate_limited, unauthorized
from services.orders.service_layer.authentication import KeyCache

bearer = HTTPBearer(
    auto_error=False,
    bearerFormat="of_live_<43 characters>",
    description="An API key from `onceflow-ops clients create` (docs/api.md).",
)
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


async def _client(request: Request, credentials: HTTPAuthorizationCredentials | None) -> Client:
    if credentials is None:
        if "authorization" in request.headers:
            raise unauthorized("the Authorization header is not `Bearer <key>`", invalid_token=True)
        raise unauthorized(
            "an API key is required: Authorization: Bearer <key>", invalid_token=False
        )
    if not well_formed(credentials.credentials):
        raise unauthorized("the API key is malformed", invalid_token=True)
    keys: KeyCache = request.app.state.keys
    client = await keys.client_for(pool=request.app.state.pool, key=credentials.credentials)
    if client is None:
        raise unauthorized("the API key is unknown or revoked", invalid_token=True)
    return client


def require(
    scope: Scope,
) -> Callable[[Request, HTTPAuthorizationCredentials | None], Awaitable[Client]]:
    """A dependency: the calling client, if its key is live, holds `scope` and is under its rate."""

    async def authorized(request: Request, credentials: Credentials) -> Client:
        client = await _client(request, credentials)
        if scope not in client.scopes:
            raise insufficient_scope(scope)
        api: ApiSettings = request.app.state.api
        rate = (client.rate_per_s or api.api_rate_per_s) / api.api_workers
        limiter: RateLimiter = request.app.state.limiter
        wait = limiter.wait(client.id, rate)
        if wait:
            raise rate_limited(wait)
        return client

    return authorized


Writer = Annotated[Client, Depends(require(Scope.WRITE))]
Reader = Annotated[Client, Depends(require(Scope.READ))]
