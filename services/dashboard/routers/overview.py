"""The dashboard's first view: every hop's state, processes and facts (services/dashboard/
tiles.py over services.ops.overview), the same as `onceflow-ops overview`."""

import logging
from datetime import UTC, datetime
from typing import Any

import anyio
from fastapi import APIRouter, Request
from starlette.responses import Response

from onceflow.problems import problem_response
from services.dashboard.overviews import WAIT_S, Shared
from services.dashboard.tiles import tiles
from services.ops.journey import iso

router = APIRouter(prefix="/api", tags=["overview"])
log = logging.getLogger("onceflow.dashboard")
# Every reader of the overview has its own deadline (5 s at most); past this, say so.
TIMEOUT_S = WAIT_S


@router.get("/overview", response_model=None)
async def overview(request: Request) -> dict[str, Any] | Response:
    """Every hop as a tile, and the hops' facts as `onceflow-ops overview --json` has them."""
    shared: Shared = request.app.state.overview
    try:
        with anyio.fail_after(TIMEOUT_S):
            read_at, hops = await anyio.to_thread.run_sync(shared, abandon_on_cancel=True)
    except TimeoutError:
        detail = f"the overview did not finish within {TIMEOUT_S:g} s"
        return problem_response(504, "overview-timeout", detail)
    except Exception as exc:  # gather turns each fact's failure into a sentence; anything else
        log.warning("overview failed: %s", exc)
        detail = f"the overview could not be read: {type(exc).__name__}: {exc}"
        return problem_response(503, "overview-unavailable", detail[:500])
    shown = tiles(hops)
    return {
        "read_at": iso(datetime.fromtimestamp(read_at, UTC)),
        "healthy": all(t["calm"] for t in shown),
        "tiles": shown,
        "hops": hops,
    }
