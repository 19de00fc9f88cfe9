"""Idempotency-Key semantics of contract section 3 on the real database."""

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import orjson
import psycopg
from fastapi.testclient import TestClient

from onceflow.settings import Settings
from services.maintenance.tasks import TASKS, Windows
from tests.integration.orders.conftest import ORDER, act, customer, key, place

CRASHER = """
import asyncio, sys
from uuid import UUID
from onceflow.settings import get_settings
from services.orders.adapters.pool import make_pool
from onceflow.settings import get_api_settings
from services.orders.domain.commands import PlaceOrder
from services.orders.domain.ids import uuid7
from services.orders.domain.order import LineItem
from services.orders.entrypoints.problems import STORED
from services.orders.entrypoints.tracing import new_traceparent
from services.orders.service_layer.idempotency import claim
from services.orders.service_layer.unit_of_work import PsycopgUnitOfWork

async def main() -> None:
    pool = make_pool(get_settings(), get_api_settings())
    await pool.open()
    async with PsycopgUnitOfWork(pool, wait_ms=50, problems=STORED) as uow:
        body = {"customer_id": sys.argv[2], "currency": "EUR",
                "items": [{"sku": "SKU-1", "quantity": 2, "unit_price_cents": 1250}]}
        await uow.orders.place(PlaceOrder(
            claim=claim("POST /orders", sys.argv[1], body), order_id=UUID(sys.argv[3]),
            event_id=uuid7(), customer_id=sys.argv[2], currency="EUR",
            items=(LineItem("SKU-1", 2, 1250),), traceparent=new_traceparent()))
        print(uow.orders._conn.info.backend_pid, flush=True)
        await asyncio.sleep(120)  # killed here: inserted, never committed

asyncio.run(main())
"""


def count(db: psycopg.Connection[tuple[Any, ...]], who: str) -> int:
    row = db.execute("SELECT count(*) FROM orders.orders WHERE customer_id = %s", (who,)).fetchone()
    assert row is not None
    return int(row[0])


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
    assert count(db, body["customer_id"]) == 1


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


def test_key_in_flight_is_409(client: TestClient, settings: Settings) -> None:
    idem, body = key(), {**ORDER, "customer_id": customer()}
    with psycopg.connect(settings.dsn("app")) as holder:  # holds the key, uncommitted
        holder.execute(
            "INSERT INTO orders.idempotency_keys VALUES "
            "('POST /orders', %s, '\\x00', 201, '{}', now())",
            (idem,),
        )
        response = client.post("/orders", json=body, headers={"Idempotency-Key": idem})
        assert response.status_code == 409
        assert response.json()["type"].endswith("request-in-flight")
        holder.rollback()
    assert client.post("/orders", json=body, headers={"Idempotency-Key": idem}).status_code == 201


def test_concurrent_same_key_creates_one_order(client: TestClient, db: Any) -> None:
    body, idem = {**ORDER, "customer_id": customer()}, key()
    with ThreadPoolExecutor(8) as pool:
        responses = list(
            pool.map(
                lambda _: client.post("/orders", json=body, headers={"Idempotency-Key": idem}),
                range(8),
            )
        )
    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(201) >= 1
    assert set(statuses) <= {201, 409}
    fresh = [
        r for r in responses if r.status_code == 201 and "idempotent-replayed" not in r.headers
    ]
    assert len(fresh) == 1
    assert {r.json()["id"] for r in responses if r.status_code == 201} == {fresh[0].json()["id"]}
    assert count(db, body["customer_id"]) == 1


def test_crash_before_commit_leaves_nothing(
    client: TestClient, db: Any, settings: Settings
) -> None:
    idem, who, order_id = key(), customer(), "01a20114-a2ad-7eaf-9c28-0000000000c5"
    db.execute("DELETE FROM orders.orders WHERE id = %s", (order_id,))
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASHER, idem, who, order_id],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "ONCEFLOW_API_POOL_SIZE": "1"},
    )
    try:
        assert proc.stdout is not None
        backend_pid = int(proc.stdout.readline())  # the insert ran, the transaction is open
        body = {**ORDER, "customer_id": who, "items": ORDER["items"][:1]}
        assert (
            client.post("/orders", json=body, headers={"Idempotency-Key": idem}).status_code == 409
        )
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while db.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (backend_pid,)).fetchone():
        assert time.monotonic() < deadline, "the killed client's transaction is still open"
        time.sleep(0.05)
    assert db.execute("SELECT 1 FROM orders.orders WHERE id = %s", (order_id,)).fetchone() is None
    assert (
        db.execute("SELECT 1 FROM orders.idempotency_keys WHERE key = %s", (idem,)).fetchone()
        is None
    )
    retry = client.post("/orders", json=body, headers={"Idempotency-Key": idem})
    assert retry.status_code == 201
    assert "idempotent-replayed" not in retry.headers
    assert count(db, who) == 1


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
