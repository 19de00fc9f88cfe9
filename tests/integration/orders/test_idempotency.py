"""Idempotency-Key semantics of contract section 3 on the real database: replays, a key reused
with another request, scopes, retention (keys whose first request is still running:
test_idempotency_in_flight.py)."""

from datetime import timedelta
from typing import Any

import orjson
import psycopg
from fastapi.testclient import TestClient

from onceflow.settings import Settings
from services.maintenance.tasks import TASKS, Windows
from tests.integration.orders.conftest import ORDER, act, customer, key, orders_of, place


def test_replay_after_success_writes_nothing(client: TestClient, db: Any) -> None:
    body, idem = {**ORDER, "customer_id": customer()}, key()
    first = client.post("/orders", json=body, headers={"Idempotency-Key": idem})
    who, items = body["customer_id"].encode(), orjson.dumps(body["items"])
    reordered = b'{"items": %b, "currency": "EUR",\n  "customer_id": "%b"}' % (items, who)
    again = client.post(
        "/orders",
        content=reordered,
        headers={"Idempotency-Key": idem, "content-type": "application/json"},
    )
    assert first.status_code == again.status_code == 201
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["location"] == first.headers["location"]
    assert orders_of(db, body["customer_id"]) == 1


def test_same_key_different_request_is_422(client: TestClient, db: Any) -> None:
    idem, who = key(), customer()
    assert (
        client.post(
            "/orders", json={**ORDER, "customer_id": who}, headers={"Idempotency-Key": idem}
        ).status_code
        == 201
    )
    other = client.post(
        "/orders", json={**ORDER, "customer_id": customer()}, headers={"Idempotency-Key": idem}
    )
    assert other.status_code == 422
    assert other.json()["type"].endswith("idempotency-key-reused")
    order_id = place(client)["id"]
    assert act(client, order_id, "pay", idem).status_code == 200  # another endpoint: another scope
    assert (
        act(client, place(client)["id"], "pay", idem).status_code == 422
    )  # same scope, other order


def test_replay_after_a_4xx_returns_the_stored_answer(client: TestClient) -> None:
    order_id, idem = place(client)["id"], key()
    first = act(client, order_id, "ship", idem)
    assert first.status_code == 409
    assert act(client, order_id, "pay").status_code == 200  # shipping would now be allowed...
    again = act(client, order_id, "ship", idem)
    assert (again.status_code, again.content) == (409, first.content)  # ...but the key replays
    assert again.headers["idempotent-replayed"] == "true"
    assert again.headers["content-type"] == "application/problem+json"
    assert client.get(f"/orders/{order_id}").json()["status"] == "PAID"
    missing, idem2 = "01a20114-a2ad-7eaf-9c28-000000000001", key()
    assert act(client, missing, "cancel", idem2).status_code == 404
    assert act(client, missing, "cancel", idem2).headers["idempotent-replayed"] == "true"


def test_key_is_stored_with_the_change_and_purged_after_retention(
    client: TestClient, db: Any, settings: Settings
) -> None:
    old, recent = key(), key()
    for idem in (old, recent):
        client.post(
            "/orders", json={**ORDER, "customer_id": customer()}, headers={"Idempotency-Key": idem}
        )
    stored = db.execute(
        "SELECT status, body->>'status' FROM orders.idempotency_keys WHERE key = %s", (old,)
    ).fetchone()
    assert stored == (201, "PLACED")
    db.execute(
        "UPDATE orders.idempotency_keys SET created_at = now() - %s WHERE key = %s",
        (timedelta(hours=25), old),
    )
    purge = next(task for task in TASKS if task.name == "idempotency_keys")
    with psycopg.connect(settings.dsn(purge.role), autocommit=True) as conn:
        assert purge.run(conn, Windows(timedelta(hours=24), timedelta(days=8)), batch=100) >= 1
    keys = {
        r[0]
        for r in db.execute(
            "SELECT key FROM orders.idempotency_keys WHERE key IN (%s, %s)", (old, recent)
        )
    }
    assert keys == {recent}
