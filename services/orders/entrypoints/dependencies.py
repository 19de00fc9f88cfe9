"""Annotated dependencies of the routes: pool, unit of work, Idempotency-Key, traceparent."""

import re
from typing import Annotated, Any

import orjson
from fastapi import Depends, Request

from services.orders.adapters.pool import Pool
from services.orders.config import ApiSettings
from services.orders.entrypoints.problems import ProblemError
from services.orders.entrypoints.tracing import traceparent_for
from services.orders.service_layer.unit_of_work import PsycopgUnitOfWork, UnitOfWork

KEY_PATTERN = r"^[\x20-\x7e]{1,255}$"
_KEY = re.compile(KEY_PATTERN)


def get_pool(request: Request) -> Pool:
    """The connection pool opened by the app's lifespan."""
    pool: Pool = request.app.state.pool
    return pool


def get_api_settings(request: Request) -> ApiSettings:
    """The settings the app was built with."""
    api: ApiSettings = request.app.state.api
    return api


def get_uow(request: Request) -> UnitOfWork:
    """A fresh unit of work on the app's pool."""
    return PsycopgUnitOfWork(
        get_pool(request), wait_ms=get_api_settings(request).api_idempotency_wait_ms
    )


def idempotency_key(request: Request) -> str:
    """The Idempotency-Key header: required, 1-255 printable ASCII characters, else 400."""
    key = request.headers.get("idempotency-key")
    if key is None:
        raise ProblemError(400, "idempotency-key-missing", "the Idempotency-Key header is required")
    if not _KEY.match(key):
        raise ProblemError(
            400,
            "idempotency-key-invalid",
            "Idempotency-Key must be 1-255 printable ASCII characters",
        )
    return key


def traceparent(request: Request) -> str:
    """The request's W3C traceparent, or a newly started trace."""
    return traceparent_for(request.headers.get("traceparent"))


async def empty_body(request: Request) -> None:
    """Transitions take no body: accept nothing (or `{}`), reject anything else."""
    raw = await request.body()
    if not raw.strip():
        return
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ProblemError(400, "malformed-json", "the request body is not valid JSON") from exc
    if doc != {}:
        raise ProblemError(422, "validation", "this endpoint takes no request body")


PoolDep = Annotated[Pool, Depends(get_pool)]
UoW = Annotated[UnitOfWork, Depends(get_uow)]
IdempotencyKey = Annotated[str, Depends(idempotency_key)]
Traceparent = Annotated[str, Depends(traceparent)]
NoBody = Depends(empty_body)

KEY_PARAMETER: dict[str, Any] = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": True,
    "description": "Client-chosen key; a retry with the same key and request replays the answer.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": KEY_PATTERN},
}
TRACEPARENT_PARAMETER: dict[str, Any] = {
    "name": "traceparent",
    "in": "header",
    "required": False,
    "description": "W3C Trace Context; stored with the outbox event (a new one if absent).",
    "schema": {"type": "string"},
}
