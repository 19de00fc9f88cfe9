"""RFC 9457 problem details: the body of every error response of the orders API (rendered by
onceflow/problems.py): the model, the problems the API answers with, their OpenAPI entries."""

import math
from http import HTTPStatus
from typing import Any

import orjson
from pydantic import BaseModel, Field

from onceflow.problems import PROBLEM_JSON, problem_document


class FieldError(BaseModel):
    """One invalid input: where it is (`location`, JSON `pointer`) and what is wrong."""

    location: str
    pointer: str
    detail: str
    code: str


class Problem(BaseModel):
    """application/problem+json (RFC 9457)."""

    type: str
    title: str
    status: int
    detail: str
    errors: list[FieldError] | None = None
    order_status: str | None = None
    request_id: str = Field(
        description="The response's X-Request-Id: quote it to find the request's log lines."
    )


class ProblemError(Exception):
    """Raise to answer with a problem response."""

    def __init__(
        self, status: int, slug: str | None, detail: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(detail)
        self.status, self.slug, self.detail, self.headers = status, slug, detail, headers


ORDER_NOT_FOUND = "order-not-found"
# The problems the write functions store as a key's answer, by the kind the SQL names them
# (orders.transition_order adds the detail).
_STORED_KINDS = {
    "not_found": problem_document(404, ORDER_NOT_FOUND),
    "invalid_transition": problem_document(409, "invalid-transition"),
    "concurrent_transition": problem_document(409, "concurrent-transition"),
}


def stored_problems(request_id: str | None) -> str:
    """The stored problems as the write functions take them, naming the request (a replay of
    the answer is then byte for byte the first, with the id of the request that produced it)."""
    named = {"request_id": request_id} if request_id else {}
    return orjson.dumps({kind: {**doc, **named} for kind, doc in _STORED_KINDS.items()}).decode()


STORED = stored_problems(None)


# RFC 6750 challenges: a client learns how to authenticate, or which scope it lacks.
CHALLENGE = 'Bearer realm="onceflow"'


def unauthorized(detail: str, *, invalid_token: bool) -> ProblemError:
    """401: no usable key (missing, malformed, unknown or revoked)."""
    challenge = CHALLENGE + (', error="invalid_token"' if invalid_token else "")
    return ProblemError(401, "unauthorized", detail, {"WWW-Authenticate": challenge})


def insufficient_scope(scope: str) -> ProblemError:
    """403: the key is valid but lacks `scope`."""
    challenge = f'{CHALLENGE}, error="insufficient_scope", scope="{scope}"'
    detail = f"the API key lacks the scope {scope}"
    return ProblemError(403, "insufficient-scope", detail, {"WWW-Authenticate": challenge})


def rate_limited(wait_s: float, reason: str = "over this client's request rate") -> ProblemError:
    """429: over the client's rate (or the peer's failed authentications); Retry-After is whole
    seconds, rounded up."""
    retry = str(max(1, math.ceil(wait_s)))
    return ProblemError(
        429, "rate-limited", f"{reason}: retry after {retry} s", {"Retry-After": retry}
    )


def unavailable() -> ProblemError:
    """503: the database cannot be reached or the pool is exhausted: retry later."""
    return ProblemError(503, "unavailable", "the database is unavailable", {"Retry-After": "1"})


AUTH_HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"schema": {"type": "string"}}},
    403: {"WWW-Authenticate": {"schema": {"type": "string"}}},
    429: {"Retry-After": {"schema": {"type": "string", "pattern": "^[0-9]+$"}}},
}


def auth_responses() -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` of an operation that takes an API key: 401, 403, 429."""
    return {
        status: {**doc, "headers": AUTH_HEADERS[int(status)]}
        for status, doc in problem_responses(*AUTH_HEADERS).items()
    }


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries declaring problem+json bodies for `statuses`."""
    schema = {"$ref": "#/components/schemas/Problem"}
    return {
        status: {
            "description": HTTPStatus(status).phrase,
            "content": {PROBLEM_JSON: {"schema": schema}},
        }
        for status in statuses
    }
