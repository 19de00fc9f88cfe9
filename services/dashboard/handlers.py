"""Every error leaves the dashboard as problem+json (RFC 9457): never a stack trace."""

import logging

from fastapi import FastAPI, Request
from starlette.exceptions import HTTPException
from starlette.responses import Response

from onceflow.problems import problem_response

log = logging.getLogger("onceflow.dashboard")


async def http_error(_: Request, exc: Exception) -> Response:
    """Unknown paths, wrong methods and other HTTP errors."""
    assert isinstance(exc, HTTPException)
    return problem_response(exc.status_code, None, str(exc.detail), headers=dict(exc.headers or {}))


async def unexpected(request: Request, exc: Exception) -> Response:
    """Anything else: logged with its trace, answered with one sentence."""
    log.error("unexpected error on %s", request.url.path, exc_info=exc)
    return problem_response(500, "internal", f"the dashboard failed: {type(exc).__name__}")


def install(app: FastAPI) -> None:
    """Register the handlers."""
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
