"""A write that waits on the database past the API's statement timeout (a table lock held by a
migration or an operator) is answered 503 `unavailable`, writes nothing, and the same
Idempotency-Key succeeds once the lock is gone: no request hangs on a lock."""

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from onceflow.client_keys import Issued
from onceflow.settings import ApiSettings, Settings
from services.orders.entrypoints.app import create_app
from tests.integration.clients import bearer
from tests.integration.orders.conftest import ORDER, customer, key, orders_of

TIMEOUT_MS = 300


@pytest.fixture(scope="module")
def impatient(caller: Issued) -> Iterator[TestClient]:
    """The API with a short statement timeout."""
    app = create_app(api=ApiSettings(api_pg_statement_timeout_ms=TIMEOUT_MS))
    with TestClient(app, raise_server_exceptions=False, headers=bearer(caller)) as client:
        yield client


def test_a_write_stuck_on_a_table_lock_is_503_and_its_retry_succeeds(
    impatient: TestClient, settings: Settings, db: Any
) -> None:
    body, idem = {**ORDER, "customer_id": customer()}, key()
    headers = {"Idempotency-Key": idem}
    with ThreadPoolExecutor(1) as pool, psycopg.connect(settings.dsn("owner")) as holder:
        holder.execute("LOCK TABLE orders.orders IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        pending = pool.submit(impatient.post, "/orders", json=body, headers=headers)
        response = pending.result(timeout=30)  # answered while the lock is still held
        took = time.monotonic() - started
        holder.rollback()
    assert response.status_code == 503, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"].endswith("unavailable")
    assert "retry-after" in response.headers
    assert took < 10, took
    assert orders_of(db, body["customer_id"]) == 0
    again = impatient.post("/orders", json=body, headers=headers)
    assert again.status_code == 201, again.text
    assert "idempotent-replayed" not in again.headers
    assert orders_of(db, body["customer_id"]) == 1
