"""What the write endpoints share: OpenAPI headers and turning an Outcome into a response."""

from typing import Any

import orjson
from fastapi import Response

from onceflow.problems import PROBLEM_JSON
from services.orders.domain.outcomes import Outcome
from services.orders.entrypoints import metrics
from services.orders.entrypoints.dependencies import KEY_PARAMETER, TRACEPARENT_PARAMETER
from services.orders.entrypoints.problems import problem_responses

HEADERS = {"parameters": [KEY_PARAMETER, TRACEPARENT_PARAMETER]}
REPLAYED = {
    "Idempotent-Replayed": {
        "description": "Present (`true`) when this is the stored answer of an earlier request.",
        "schema": {"type": "string", "enum": ["true"]},
    }
}
LOCATION = {
    "Location": {"description": "/orders/{id}", "required": True, "schema": {"type": "string"}}
}
WRITE_ERRORS = problem_responses(400, 413, 415, 422, 500, 503)


def respond(outcome: Outcome, endpoint: str) -> Response:
    """The stored or new answer; replays carry `Idempotent-Replayed: true`."""
    body = outcome.body or b""  # only a key reused with another request has none (422 before)
    headers = {}
    if outcome.replayed:
        headers["Idempotent-Replayed"] = "true"
        metrics.REPLAYS.labels(endpoint).inc()
    if outcome.status == 201:
        headers["Location"] = f"/orders/{orjson.loads(body)['id']}"
    media = "application/json" if outcome.status < 400 else PROBLEM_JSON
    return Response(body, outcome.status, headers, media_type=media)


def replayable(responses: dict[int | str, dict[str, Any]]) -> dict[int | str, dict[str, Any]]:
    """Declare the Idempotent-Replayed header on stored error answers too."""
    return {status: {**doc, "headers": REPLAYED} for status, doc in responses.items()}
