"""Annotated dependencies of the routes: pool, unit of work, Idempotency-Key, traceparent."""

import re
from dataclasses import dataclass
from typing import Annotated, Any
from uuid import UUID

import orjson
from fastapi import Depends, Request

from onceflow import contract, logs
from onceflow.settings import ApiSettings
from services.orders.adapters.pool import Pool
from services.orders.entrypoints.auth import Writer
from services.orders.entrypoints.problems import ProblemError, stored_problems
from services.orders.entrypoints.tracing import traceparent_for
from services.orders.service_layer.unit_of_work import PsycopgUnitOfWork, UnitOfWork

KEY_PATTERN = f"^(?:{contract.IDEMPOTENCY_KEY})$"
_KEY = re.compile(rf"\A(?:{contract.IDEMPOTENCY_KEY})\Z")
KEY_RULE = (
    f"Idempotency-Key must be 1-{contract.IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters"
)


# Every dependency is `async def`: FastAPI runs plain `def` dependencies in a thread pool, a
# hop that cost more than the rest of the dependency on the hot path.


async def get_pool(request: Request) -> Pool:
    """The connection pool opened by the app's lifespan."""
    pool: Pool = request.app.state.pool
    return pool


@dataclass(frozen=True)
class WriteContext:
    """What every write endpoint needs: a unit of work, the calling client, its Idempotency-Key
    and the trace."""

    uow: UnitOfWork
    client_id: UUID
    key: str
    traceparent: str


async def write_context(request: Request, client: Writer) -> WriteContext:
    """One dependency for the write path (each FastAPI dependency has a per-request cost)."""
    api: ApiSettings = request.app.state.api
    return WriteContext(
        client_id=client.id,
        uow=PsycopgUnitOfWork(
            request.app.state.pool,
            wait_ms=api.api_idempotency_wait_ms,
            problems=stored_problems(logs.request_id.get()),
        ),
        key=idempotency_key(request),
        traceparent=traceparent_for(request.headers.get("traceparent")),
    )


def idempotency_key(request: Request) -> str:
    """The Idempotency-Key header: required and well-formed (contract.IDEMPOTENCY_KEY), else 400."""
    key = request.headers.get("idempotency-key")
    if key is None:
        raise ProblemError(400, "idempotency-key-missing", "the Idempotency-Key header is required")
    if not _KEY.match(key):
        raise ProblemError(400, "idempotency-key-invalid", KEY_RULE)
    return key


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
Write = Annotated[WriteContext, Depends(write_context)]
NoBody = Depends(empty_body)

KEY_PARAMETER: dict[str, Any] = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": True,
    "description": "Client-chosen key; a retry with the same key and request replays the answer.",
    "schema": {
        "type": "string",
        "minLength": 1,
        "maxLength": contract.IDEMPOTENCY_KEY_MAX_LENGTH,
        "pattern": KEY_PATTERN,
    },
}
TRACEPARENT_PARAMETER: dict[str, Any] = {
    "name": "traceparent",
    "in": "header",
    "required": False,
    "description": "W3C Trace Context; stored with the outbox event (a new one if absent).",
    "schema": {"type": "string"},
}
