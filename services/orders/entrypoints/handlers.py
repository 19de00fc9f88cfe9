"""Exception handlers: every error leaves the API as problem+json (RFC 9457); an unexpected
one is answered by the middleware (with the request id)."""

import logging
from collections.abc import Awaitable, Callable

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from psycopg_pool import PoolTimeout
from starlette.exceptions import HTTPException
from starlette.responses import Response

from onceflow.problems import problem_response
from services.orders.domain.outcomes import IdempotencyKeyReusedError, RequestInFlightError
from services.orders.entrypoints.problems import ProblemError, unavailable
from services.orders.service_layer.pagination import InvalidCursorError

log = logging.getLogger("onceflow.api")
Handler = Callable[[Request, Exception], Awaitable[Response]]


def _field_errors(exc: RequestValidationError) -> list[dict[str, str]]:
    out = []
    for error in exc.errors():
        loc = [str(part) for part in error.get("loc", ())]
        out.append(
            {
                "location": loc[0] if loc else "body",
                "pointer": "/" + "/".join(loc[1:]),
                "detail": str(error.get("msg", "invalid")),
                "code": str(error.get("type", "invalid")),
            }
        )
    return out


async def validation_error(_: Request, exc: Exception) -> Response:
    """400 for malformed JSON, otherwise 422 with field errors."""
    assert isinstance(exc, RequestValidationError)
    if any(error.get("type") == "json_invalid" for error in exc.errors()):
        return problem_response(400, "malformed-json", "the request body is not valid JSON")
    return problem_response(
        422, "validation", "the request is not valid", errors=_field_errors(exc)
    )


async def http_error(request: Request, exc: Exception) -> Response:
    """Routing errors (404 unknown path, 405 wrong method) and other HTTP errors."""
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:  # Starlette names only the first matching route's methods
        path = request.url.path
        methods = {
            method
            for route in request.app.state.api_routes
            if route.path_regex.match(path)
            for method in route.methods
        }
        headers["Allow"] = ", ".join(sorted(methods))
    return problem_response(exc.status_code, None, str(exc.detail), headers=headers)


async def problem_error(_: Request, exc: Exception) -> Response:
    """Errors raised with an explicit problem."""
    assert isinstance(exc, ProblemError)
    return problem_response(exc.status, exc.slug, exc.detail, headers=exc.headers)


async def database_unavailable(_: Request, exc: Exception) -> Response:
    """The database cannot be reached or the pool is exhausted: retry later."""
    log.warning("database unavailable: %s", exc)
    problem = unavailable()
    return problem_response(problem.status, problem.slug, problem.detail, headers=problem.headers)


STATIC = {
    IdempotencyKeyReusedError: (
        422,
        "idempotency-key-reused",
        "the Idempotency-Key was used with a different request",
    ),
    RequestInFlightError: (
        409,
        "request-in-flight",
        "a request with this Idempotency-Key is still in progress",
    ),
    InvalidCursorError: (422, "invalid-cursor", "the cursor is not valid"),
}


def install(app: FastAPI) -> None:
    """Register every handler on `app`."""
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(ProblemError, problem_error)
    app.add_exception_handler(psycopg.OperationalError, database_unavailable)
    app.add_exception_handler(PoolTimeout, database_unavailable)
    # Anything unexpected: middleware.py logs it and answers 500 with the request id.
    for exc_type, (status, slug, detail) in STATIC.items():
        app.add_exception_handler(exc_type, _static(status, slug, detail))


def _static(status: int, slug: str, detail: str) -> Handler:
    async def handler(_: Request, exc: Exception) -> Response:
        return problem_response(status, slug, str(exc) or detail)

    return handler
