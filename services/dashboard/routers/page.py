"""The page, its own files, the chart library (from node_modules), the panels and liveness."""

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.staticfiles import StaticFiles
from starlette.responses import FileResponse, Response

from onceflow.problems import problem_response
from services.dashboard.panels import page_config

HERE = Path(__file__).resolve().parent.parent
STATIC = HERE / "static"
# `npm ci` (stack/bootstrap.sh) installs the pinned uPlot of package-lock.json here.
UPLOT = HERE / "node_modules" / "uplot" / "dist"
VENDOR = {name: UPLOT / name for name in ("uPlot.iife.min.js", "uPlot.min.css")}
NO_CACHE = {"Cache-Control": "no-cache"}

router = APIRouter()
static_files = StaticFiles(directory=STATIC)


@router.get("/", include_in_schema=False)
async def index() -> FileResponse:
    """The dashboard page."""
    return FileResponse(STATIC / "index.html", headers=NO_CACHE)


@router.get("/vendor/{name}", include_in_schema=False)
async def vendor(name: str) -> Response:
    """uPlot's script and stylesheet, as npm installed them."""
    path = VENDOR.get(name)
    if path is None:
        return problem_response(404, None, f"no vendor file {name}")
    if not path.is_file():
        detail = "uPlot is not installed: run `npm ci` in services/dashboard (make up does)"
        return problem_response(503, "chart-library-missing", detail)
    return FileResponse(path)


@router.get("/api/panels")
async def panels(request: Request) -> dict[str, Any]:
    """What the page plots: every panel's title, unit, PromQL and headline, the windows the
    range picker offers (as far back as Prometheus keeps samples) and the refresh."""
    return page_config(request.app.state.obs.prometheus_retention_time)


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is alive (it needs nothing else to serve the page)."""
    return {"status": "ok"}
