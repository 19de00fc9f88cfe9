"""RFC 9457 problem details: the body of every error response."""

from http import HTTPStatus
from typing import Any

import orjson
from pydantic import BaseModel
from starlette.responses import Response

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:onceflow:problem:"


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


class ProblemError(Exception):
    """Raise to answer with a problem response."""

    def __init__(
        self, status: int, slug: str | None, detail: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(detail)
        self.status, self.slug, self.detail, self.headers = status, slug, detail, headers


def problem_document(status: int, slug: str | None) -> dict[str, Any]:
    """type, title and status of a problem; `slug=None` means the generic `about:blank`."""
    return {
        "type": TYPE_PREFIX + slug if slug else "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
    }


ORDER_NOT_FOUND = "order-not-found"
# The problems the write functions store as a key's answer, by the kind the SQL names them
# (orders.transition_order adds the detail).
STORED = orjson.dumps(
    {
        "not_found": problem_document(404, ORDER_NOT_FOUND),
        "invalid_transition": problem_document(409, "invalid-transition"),
        "concurrent_transition": problem_document(409, "concurrent-transition"),
    }
).decode()


def problem_body(
    status: int, slug: str | None, detail: str, errors: list[dict[str, str]] | None = None
) -> bytes:
    """Serialize a problem."""
    doc = {**problem_document(status, slug), "detail": detail}
    if errors is not None:
        doc["errors"] = errors
    return orjson.dumps(doc)


def problem_response(
    status: int,
    slug: str | None,
    detail: str,
    *,
    errors: list[dict[str, str]] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """A complete problem+json response."""
    return Response(
        problem_body(status, slug, detail, errors), status, headers, media_type=PROBLEM_JSON
    )


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
