"""Every response carries an `X-Request-Id` (the caller's, when well formed, or a new one); every
problem body has it as `request_id`, whoever answered (a handler, the middleware, an unexpected
error; a stored Idempotency-Key answer names the request that produced it, as a replay is byte for
byte the first); and every log line of the request has it."""

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from onceflow.logs import JsonFormatter
from services.orders.entrypoints.app import create_app
from tests.integration.orders.conftest import ORDER, key

pytestmark = pytest.mark.integration


class Lines(logging.Handler):
    """The JSON lines logged while a test runs, formatted as they are written (in the request)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JsonFormatter())
        self.lines: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(orjson.loads(self.format(record)))


@pytest.fixture
def lines() -> Iterator[list[dict[str, Any]]]:
    handler, root = Lines(), logging.getLogger()
    root.addHandler(handler)
    yield handler.lines
    root.removeHandler(handler)


@pytest.fixture(scope="module")
def app() -> FastAPI:
    made = create_app()

    @made.get("/boom", include_in_schema=False)
    async def boom() -> None:
        raise RuntimeError("a bug")

    return made


@pytest.fixture(scope="module")
def anonymous(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def problem_id(response: Any) -> str:
    """The request id of a problem response, the same in its header and its body."""
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["request_id"] == response.headers["x-request-id"], body
    assert int(response.headers["content-length"]) == len(response.content)
    return str(body["request_id"])


def test_a_response_gets_a_new_id_or_keeps_the_callers(anonymous: TestClient) -> None:
    first, second = anonymous.get("/healthz"), anonymous.get("/healthz")
    assert len({first.headers["x-request-id"], second.headers["x-request-id"]}) == 2
    given = anonymous.get("/healthz", headers={"X-Request-Id": "trace-42"})
    assert given.headers["x-request-id"] == "trace-42"
    bad = anonymous.get("/healthz", headers={"X-Request-Id": "bad id\twith spaces"})
    assert bad.headers["x-request-id"] != "bad id\twith spaces"


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("GET", "/orders", {}, 401),  # the authenticator, before the body is read
        ("GET", "/no-such-path", {}, 404),  # a routing error
        ("DELETE", "/healthz", {}, 405),
        # the body check (under /orders the key is checked first: 401)
        ("POST", "/healthz", {"content": b"x", "headers": {"Content-Type": "text/plain"}}, 415),
        ("GET", "/boom", {}, 500),  # an unexpected error
    ],
)
def test_every_problem_body_has_the_request_id(
    anonymous: TestClient, method: str, path: str, kwargs: dict[str, Any], status: int
) -> None:
    response = anonymous.request(
        method, path, headers={"X-Request-Id": "req-7"} | kwargs.pop("headers", {}), **kwargs
    )
    assert response.status_code == status
    assert problem_id(response) == "req-7"


def test_a_stored_problem_replays_byte_for_byte_naming_its_first_request(
    client: TestClient,
) -> None:
    headers = {"Idempotency-Key": key()}
    missing = f"/orders/{uuid.uuid4()}/cancel"
    first = client.post(missing, headers={**headers, "X-Request-Id": "first"})
    replay = client.post(missing, headers={**headers, "X-Request-Id": "again"})
    assert (first.status_code, replay.status_code) == (404, 404)
    assert problem_id(first) == "first"
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.headers["x-request-id"] == "again"
    assert replay.content == first.content  # the stored answer, which names its request


def test_an_unexpected_error_is_logged_and_answered_with_the_request_id(
    anonymous: TestClient, lines: list[dict[str, Any]]
) -> None:
    response = anonymous.get("/boom", headers={"X-Request-Id": "req-boom"})
    assert response.status_code == 500
    assert response.json()["detail"] == "an unexpected error occurred"  # no internals
    logged = [line for line in lines if line.get("request_id") == "req-boom"]
    assert [line["logger"] for line in logged] == ["onceflow.api", "onceflow.access"]
    assert "RuntimeError: a bug" in logged[0]["exc"]


def test_every_access_log_line_has_the_request_id(
    anonymous: TestClient, client: TestClient, lines: list[dict[str, Any]]
) -> None:
    answers = [
        anonymous.get("/healthz"),
        anonymous.get("/no-such-path"),
        client.post("/orders", json=ORDER, headers={"Idempotency-Key": key()}),
    ]
    access = [line for line in lines if line["logger"] == "onceflow.access"]
    assert [line.get("request_id") for line in access] == [
        answer.headers["x-request-id"] for answer in answers
    ]
