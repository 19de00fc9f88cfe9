"""Fixtures for the order API on the real Postgres: the app in-process, connections, the WAL."""

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from onceflow.client_keys import Issued
from onceflow.settings import Settings, get_settings
from services.orders.entrypoints.app import create_app
from stack.postgres import superuser_conninfo
from tests.integration.clients import bearer, new_client
from tests.integration.orders.wal import Wal

pytestmark = pytest.mark.integration
ORDER: dict[str, Any] = {
    "customer_id": "c-42",
    "currency": "EUR",
    "items": [
        {"sku": "SKU-1", "quantity": 2, "unit_price_cents": 1250},
        {"sku": "SKU-2", "quantity": 1, "unit_price_cents": 99},
    ],
}


@pytest.fixture(scope="session")
def settings() -> Settings:
    return get_settings()


@pytest.fixture(scope="session")
def caller(settings: Settings) -> Issued:
    """The session's API client (both scopes); `client` sends its key."""
    return new_client(settings)


@pytest.fixture(scope="module")
def client(caller: Issued) -> Iterator[TestClient]:
    app = create_app()
    with TestClient(app, raise_server_exceptions=False, headers=bearer(caller)) as test_client:
        yield test_client


@pytest.fixture
def db(settings: Settings) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    """An autocommit connection as the schema owner, to look at what the API wrote."""
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as conn:
        yield conn


def key() -> str:
    return f"test-{uuid.uuid4()}"


def customer() -> str:
    return f"c-{uuid.uuid4().hex[:16]}"


def place(client: TestClient, **overrides: Any) -> dict[str, Any]:
    """POST /orders with a fresh key and customer; assert 201 and return the order."""
    body = {**ORDER, "customer_id": customer(), **overrides}
    response = client.post("/orders", json=body, headers={"Idempotency-Key": key()})
    assert response.status_code == 201, response.text
    order: dict[str, Any] = response.json()
    return order


def orders_of(db: psycopg.Connection[tuple[Any, ...]], customer_id: str) -> int:
    """How many orders the customer has in the database."""
    row = db.execute(
        "SELECT count(*) FROM orders.orders WHERE customer_id = %s", (customer_id,)
    ).fetchone()
    assert row is not None
    return int(row[0])


def act(client: TestClient, order_id: str, action: str, idem: str | None = None, **kw: Any) -> Any:
    headers = {"Idempotency-Key": idem or key(), **kw.pop("headers", {})}
    return client.post(f"/orders/{order_id}/{action}", headers=headers, **kw)


@pytest.fixture
def wal(settings: Settings) -> Iterator[Wal]:
    """Decode the WAL from now on (the superuser owns the slot; it vanishes with the session)."""
    slot = f"test_orders_{uuid.uuid4().hex[:12]}"
    conninfo = superuser_conninfo(settings, settings.pg_database)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_create_logical_replication_slot(%s, 'test_decoding', temporary => true)",
            (slot,),
        )
        yield Wal(conn, slot)
