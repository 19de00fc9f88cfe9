"""The API key of every /orders request: 401 without a live key, 403 without the scope the
route needs, 429 over the client's rate.

The key is checked by `Authenticator`, which the request middleware calls before it reads the
body (an unauthenticated request is answered 401 without its body being read or parsed). A peer
address that fails too often is answered 429 before any lookup, and a key the database did not
know is not looked up again for a while (docs/security.md, "API edge"). The route dependency
then checks the scope and the client's rate; OpenAPI declares the bearer scheme
(entrypoints/openapi.py)."""

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated

import psycopg
from fastapi import Depends, Request
from fastapi.security import HTTPBearer
from psycopg_pool import PoolTimeout
from starlette.types import Scope as AsgiScope

from onceflow.api_keys import key_hash, well_formed
from onceflow.contract import Scope
from onceflow.settings import ApiSettings
from services.orders.adapters.clients import lookup_in
from services.orders.adapters.pool import Pool
from services.orders.domain.api_keys import Client
from services.orders.domain.rate_limit import PeerBudget, RateLimiter
from services.orders.entrypoints import metrics
from services.orders.entrypoints.problems import (
    ProblemError,
    insufficient_scope,
    rate_limited,
    unauthorized,
    unavailable,
)
from services.orders.service_layer.authentication import KeyCache

# The bearer scheme as OpenAPI declares it (entrypoints/openapi.py); the key is checked by
# Authenticator in the middleware, so no route depends on it (a dependency costs per request).
bearer = HTTPBearer(
    auto_error=False,
    bearerFormat="of_live_<43 characters>",
    description="An API key from `onceflow-ops clients create` (docs/api.md).",
)
SCHEME = "HTTPBearer"
log = logging.getLogger("onceflow.api")
CLIENT = "onceflow.client"  # where the authenticator leaves the client in the ASGI scope
PREFIX = "/orders"  # every path under it takes a key (the routers' prefix)


def _bearer_key(scope: AsgiScope) -> str | ProblemError:
    """The key of the request's `Authorization: Bearer <key>`, or why there is none."""
    values = [v for k, v in scope["headers"] if k == b"authorization"]
    if not values:
        return unauthorized(
            "an API key is required: Authorization: Bearer <key>", invalid_token=False
        )
    header: str = values[0].decode("latin-1")
    scheme, _, given = header.partition(" ")
    key = given.strip()
    if scheme.lower() != "bearer" or not key:
        return unauthorized("the Authorization header is not `Bearer <key>`", invalid_token=True)
    if not well_formed(key):
        return unauthorized("the API key is malformed", invalid_token=True)
    return key


@dataclass
class Authenticator:
    """Verifies the key of every request under /orders before its body is read."""

    keys: KeyCache
    failures: PeerBudget
    pool: Pool

    def __post_init__(self) -> None:
        self.lookup = lookup_in(self.pool)

    async def __call__(self, scope: AsgiScope) -> ProblemError | None:
        """None, with the client in scope[CLIENT], or the refusal to answer with."""
        path: str = scope["path"]
        if path != PREFIX and not path.startswith(PREFIX + "/"):
            return None
        key = _bearer_key(scope)
        if isinstance(key, ProblemError):
            return key
        digest = key_hash(key)
        client = self.keys.known(digest)
        if client is None:
            peer = scope["client"][0] if scope.get("client") else ""
            # A key this worker verified before (its entry only aged out) is no guess: looking
            # it up again costs the peer nothing, so a working client behind a guessing
            # neighbour's address is not refused each time its entry expires.
            charged = not self.keys.verified_before(digest)
            wait = self.failures.take(peer) if charged else 0.0
            if wait:
                metrics.KEY_CHECKS.labels("peer-limited").inc()
                return rate_limited(wait, "too many failed authentications from this address")
            if self.keys.known_unknown(digest):
                metrics.KEY_CHECKS.labels("known-unknown").inc()
            else:
                try:
                    client = await self.keys.look_up(digest, self.lookup)
                except (psycopg.OperationalError, PoolTimeout) as exc:
                    log.warning("database unavailable: %s", exc)
                    if charged:
                        self.failures.give_back(peer)  # not the peer's failure
                    return unavailable()
                metrics.KEY_CHECKS.labels("unknown" if client is None else "found").inc()
            if client is None:
                return unauthorized(
                    "the API key is unknown, revoked or expired", invalid_token=True
                )
            if charged:
                self.failures.give_back(peer)
        scope[CLIENT] = client
        return None


def require(scope: Scope) -> Callable[[Request], Awaitable[Client]]:
    """A dependency: the calling client, if its key is live, holds `scope` and is under its rate."""

    async def authorized(request: Request) -> Client:
        client: Client | None = request.scope.get(CLIENT)
        if client is None:  # a route outside PREFIX took a key: a programming error
            raise unauthorized("an API key is required", invalid_token=False)
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
