"""docs/*.md as HTML (services/dashboard/docs.py): the runbooks alert cards link to."""

import anyio
from fastapi import APIRouter
from starlette.responses import HTMLResponse, Response

from onceflow.problems import problem_response
from services.dashboard.docs import HEADERS, find, index, page

router = APIRouter()


@router.get("/docs", include_in_schema=False)
async def docs() -> Response:
    """The list of docs/*.md (FastAPI's own /docs, Swagger UI from a CDN, is off)."""
    return HTMLResponse(await anyio.to_thread.run_sync(index), headers=HEADERS)


@router.get("/docs/{name}", include_in_schema=False)
async def doc(name: str) -> Response:
    """One Markdown file of docs/, rendered; 404 for any other name."""
    path = find(name)
    if path is None:
        return problem_response(404, None, f"no document docs/{name[:80]}")
    html = await anyio.to_thread.run_sync(page, path)
    return HTMLResponse(html, headers=HEADERS)
