"""The FastAPI application: routers, problem handlers, middleware and the pool's lifespan."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from onceflow import logs
from onceflow.settings import ApiSettings, Settings, get_api_settings, get_settings
from services.orders.adapters.pool import make_pool
from services.orders.domain.rate_limit import PeerBudget, RateLimiter
from services.orders.entrypoints import docs, handlers, openapi
from services.orders.entrypoints.auth import Authenticator
from services.orders.entrypoints.middleware import RequestContextMiddleware
from services.orders.entrypoints.routers import ops, orders, transitions
from services.orders.service_layer.authentication import KeyCache

DESCRIPTION = (
    "Orders with exactly-once effects: every write takes an `Idempotency-Key`, every change "
    "emits one event through the transactional outbox. Every /orders operation takes an API "
    "key (`Authorization: Bearer <key>`) and sees only its client's orders. Errors are "
    "RFC 9457 problem+json."
)


def create_app(settings: Settings | None = None, api: ApiSettings | None = None) -> FastAPI:
    """Build the app; the pool opens on startup and closes on shutdown."""
    settings = settings or get_settings()
    api = api or get_api_settings()
    logs.configure(api.api_log_level)
    pool = make_pool(settings, api)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await pool.open(wait=False)
        try:
            yield
        finally:
            await pool.close()

    app = FastAPI(
        title="Onceflow order API",
        version="1.0.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # docs.py serves /docs from node_modules; FastAPI's would use a CDN
        redoc_url=None,
        telemetry={"tracing": api.api_otel, "metrics": api.api_otel, "logs": api.api_otel},
    )
    app.state.pool = pool
    app.state.settings = settings
    app.state.api = api
    app.state.limiter = RateLimiter(burst_s=api.api_rate_burst_s)
    keys = KeyCache(
        ttl_s=api.api_key_cache_ttl_s,
        unknown_ttl_s=api.api_unknown_key_ttl_s,
        unknown_size=api.api_unknown_key_cache_size,
    )
    app.state.keys = keys
    # Each worker allows its share of the peer's failures (at least one at a time).
    failures = PeerBudget(
        rate=api.api_auth_failures_per_s / api.api_workers,
        burst=max(1.0, api.api_auth_failures_burst / api.api_workers),
    )
    routers = (orders.router, transitions.router, ops.router)
    for router in routers:
        app.include_router(router)
    app.state.api_routes = [route for router in routers for route in router.routes]
    handlers.install(app)
    openapi.install(app, api)
    docs.install(app)
    app.add_middleware(
        RequestContextMiddleware,
        max_body_bytes=api.api_max_body_bytes,
        access_log_on=api.api_access_log,
        gate=Authenticator(keys=keys, failures=failures, pool=pool),
    )
    return app
