"""What the write endpoints share: OpenAPI headers and turning an Outcome into a response."""

from typing import Any

import orjson
from fastapi import Response

from services.orders.entrypoints import metrics
from services.orders.entrypoints.dependencies import KEY_PARAMETER, TRACEPARENT_PARAMETER
from services.orders.entrypoints.problems import PROBLEM_JSON, problem_responses
from services.orders.service_layer.idempotency import Outcome

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
    headers = {}
    if outcome.replayed:
        headers["Idempotent-Replayed"] = "true"
        metrics.REPLAYS.labels(endpoint).inc()
    if outcome.status == 201:
        headers["Location"] = f"/orders/{orjson.loads(outcome.body)['id']}"
    media = "application/json" if outcome.status < 400 else PROBLEM_JSON
    return Response(outcome.body, outcome.status, headers, media_type=media)


def replayable(responses: dict[int | str, dict[str, Any]]) -> dict[int | str, dict[str, Any]]:
    """Declare the Idempotent-Replayed header on stored error answers too."""
    return {status: {**doc, "headers": REPLAYED} for status, doc in responses.items()}
