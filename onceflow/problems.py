"""RFC 9457 problem details as every HTTP service of the product renders them
(application/problem+json): the orders API and the dashboard."""

from http import HTTPStatus
from typing import Any

import orjson
from starlette.responses import Response

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:onceflow:problem:"


def problem_document(status: int, slug: str | None) -> dict[str, Any]:
    """type, title and status of a problem; `slug=None` means the generic `about:blank`."""
    return {
        "type": TYPE_PREFIX + slug if slug else "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
    }


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
