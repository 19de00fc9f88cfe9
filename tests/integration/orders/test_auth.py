"""API keys on the real API and database: 401 without a live key, 403 without the scope, 429
over the client's rate, and a revocation seen by every worker within 1 s."""

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from onceflow.api_keys import new_key
from onceflow.client_keys import Issued
from onceflow.contract import Scope
from onceflow.settings import ApiSettings, Settings, get_api_settings
from services.ops.clients import revoke
from services.orders.entrypoints.app import create_app
from tests.integration.clients import bearer, new_client
from tests.integration.orders.conftest import ORDER, key, place

MISSING = uuid.UUID("01a20114-a2ad-7eaf-9c28-000000000003")
# Every /orders operation, with what it needs to get past authentication.
OPERATIONS = [
    ("POST", "/orders", ORDER),
    ("GET", "/orders", None),
    ("GET", f"/orders/{MISSING}", None),
    *(("POST", f"/orders/{MISSING}/{action}", None) for action in ("pay", "ship", "cancel")),
]


def call(client: TestClient, method: str, path: str, body: object, **headers: str) -> Response:
    response: Response = client.request(
        method, path, json=body, headers={"Idempotency-Key": key(), **headers}
    )
    return response


def assert_unauthorized(response: Response, *, invalid_token: bool) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == "urn:onceflow:problem:unauthorized"
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert ('error="invalid_token"' in challenge) is invalid_token


@pytest.fixture(scope="module")
def anonymous() -> Iterator[TestClient]:
    with TestClient(create_app(), raise_server_exceptions=False) as client:
        yield client


@pytest.mark.parametrize(("method", "path", "body"), OPERATIONS)
def test_every_operation_needs_a_key(
    anonymous: TestClient, method: str, path: str, body: object
) -> None:
    assert_unauthorized(call(anonymous, method, path, body), invalid_token=False)


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer not-a-key",
        "Bearer of_live_short",
        "Basic dXNlcjpwYXNz",
        f"Bearer {new_key()}x",
        "Bearer",
    ],
)
def test_a_malformed_key_is_401(anonymous: TestClient, authorization: str) -> None:
    response = call(anonymous, "POST", "/orders", ORDER, Authorization=authorization)
    assert_unauthorized(response, invalid_token=True)


def test_an_unknown_key_is_401(anonymous: TestClient) -> None:
    response = call(anonymous, "GET", "/orders", None, Authorization=f"Bearer {new_key()}")
    assert_unauthorized(response, invalid_token=True)


def test_health_and_metrics_need_no_key(anonymous: TestClient) -> None:
    assert anonymous.get("/healthz").status_code == 200
    assert anonymous.get("/metrics").status_code == 200


def test_a_read_only_key_cannot_write_and_a_write_only_key_cannot_read(
    anonymous: TestClient, settings: Settings
) -> None:
    reader = bearer(new_client(settings, Scope.READ))
    writer = bearer(new_client(settings, Scope.WRITE))
    for method, path, body in OPERATIONS:
        headers = writer if method == "GET" else reader
        response = call(anonymous, method, path, body, **headers)
        assert response.status_code == 403, (method, path, response.text)
        assert response.json()["type"] == "urn:onceflow:problem:insufficient-scope"
        assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
    assert call(anonymous, "GET", "/orders", None, **reader).status_code == 200
    assert call(anonymous, "POST", "/orders", ORDER, **writer).status_code == 201


def one_worker(**update: object) -> ApiSettings:
    return get_api_settings().model_copy(update={"api_workers": 1, **update})


def test_past_the_rate_is_429_with_retry_after(settings: Settings) -> None:
    slow = new_client(settings, rate_per_s=0.5)  # a token every 2 s, a bucket of one
    with TestClient(create_app(api=one_worker()), headers=bearer(slow)) as client:
        assert client.get("/orders").status_code == 200
        limited = client.get("/orders")
        assert limited.status_code == 429, limited.text
        assert limited.json()["type"] == "urn:onceflow:problem:rate-limited"
        assert limited.headers["retry-after"] == "2"
        other = new_client(settings)  # a client's limit is its own
        assert client.get("/orders", headers=bearer(other)).status_code == 200


def test_a_revoked_key_is_401_on_every_worker_within_a_second(
    settings: Settings, caller: Issued
) -> None:
    doomed = new_client(settings)
    apps = [create_app(api=one_worker()), create_app(api=one_worker())]  # two workers' caches
    with (
        TestClient(apps[0], headers=bearer(doomed)) as a,
        TestClient(apps[1], headers=bearer(doomed)) as b,
    ):
        order = place(a)
        assert b.get(f"/orders/{order['id']}").status_code == 200  # both caches hold the key
        revoke(settings=settings, client_id=doomed.client_id)
        revoked_at = time.monotonic()
        pending = {"a": a, "b": b}
        while pending:  # ends: from 1 s after the revocation on, an answer is 401 or fails
            for name, client in list(pending.items()):
                sent = time.monotonic() - revoked_at
                response = client.get(f"/orders/{order['id']}")
                if response.status_code == 401:
                    del pending[name]
                    continue
                assert response.status_code == 200, response.text
                assert sent < 1.0, f"worker {name} took a key revoked {sent:.2f} s before"
        assert_unauthorized(a.get("/orders"), invalid_token=True)
        assert b.get("/orders", headers=bearer(caller)).status_code == 200


def test_last_use_is_recorded_at_most_once_a_minute(settings: Settings, db: Any) -> None:
    issued = new_client(settings)
    query = "SELECT last_used_at FROM orders.api_keys WHERE client_id = %s"
    assert db.execute(query, (issued.client_id,)).fetchone() == (None,)
    app = create_app(api=one_worker())
    with TestClient(app) as client:
        assert client.get("/orders", headers=bearer(issued)).status_code == 200
        (first,) = db.execute(query, (issued.client_id,)).fetchone()
        assert first is not None
        app.state.keys.entries.clear()  # as if the cache expired: the key is looked up again
        assert client.get("/orders", headers=bearer(issued)).status_code == 200
        assert db.execute(query, (issued.client_id,)).fetchone() == (first,)
