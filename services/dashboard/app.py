"""The dashboard's FastAPI application: settings, the Prometheus client, the overview and the
journey lookup are made here and reach the routes through `app.state`."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI

from onceflow.settings import (
    ObservabilitySettings,
    Settings,
    get_notification_settings,
    get_observability_settings,
    get_settings,
)
from onceflow.settings.ops import get_ops_settings
from services.dashboard import handlers
from services.dashboard.journeys import JourneyLookup, ops_lookup
from services.dashboard.login import Login, RequireLogin
from services.dashboard.overviews import OverviewSource, Shared, ops_overview
from services.dashboard.panels import offered_queries
from services.dashboard.routers import docs, journey, overview, page, prometheus


def create_app(
    obs: ObservabilitySettings | None = None,
    settings: Settings | None = None,
    lookup: JourneyLookup | None = None,
    hops: OverviewSource | None = None,
    login: Login | None = None,
) -> FastAPI:
    """Build the app; the Prometheus client opens on startup and closes on shutdown. `hops`
    stands in for services.ops.overview (tests); `login` for the ops credential (by default
    ONCEFLOW_OPS_PASSWORD or .stack/secrets/ops-password: no password, no dashboard)."""
    obs = obs or get_observability_settings()
    settings = settings or get_settings()
    if login is None:
        ops = get_ops_settings()
        login = Login(ops.ops_user, ops.password())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with httpx.AsyncClient(
            base_url=obs.prometheus_url, timeout=obs.prometheus_timeout_s
        ) as client:
            app.state.prometheus = client
            yield

    app = FastAPI(
        title="Onceflow dashboard",
        version="1.0.0",
        description="The overview of every hop, live plots of each (from Prometheus) and the "
        "journey of one order. Loopback only; the ops credential (HTTP Basic) for all but "
        "/healthz.",
        lifespan=lifespan,
        docs_url=None,  # Swagger UI would load from a CDN; /docs lists docs/*.md instead
        redoc_url=None,
    )
    app.state.obs = obs
    app.state.offered_queries = offered_queries(obs.prometheus_retention_time)
    app.state.lookup = lookup or ops_lookup(settings)
    app.state.overview = Shared(hops or ops_overview(settings, get_notification_settings(), obs))
    for router in (page.router, overview.router, prometheus.router, journey.router, docs.router):
        app.include_router(router)
    app.mount("/static", page.static_files, name="static")
    handlers.install(app)
    app.add_middleware(RequireLogin, login=login)
    return app
