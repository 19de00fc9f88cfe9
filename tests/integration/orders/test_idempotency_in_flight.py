"""A key whose first request has not completed: answered 409 while it runs, one order however
many race on it, and nothing left behind when its client dies before committing. Any other lock
the claim meets (the table's, another key's of the same hash) is waited for, never a 409."""

import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
from fastapi.testclient import TestClient

from onceflow.client_keys import Issued
from onceflow.paths import ROOT
from onceflow.settings import Settings
from services.orders.service_layer.idempotency import PLACE_SCOPE, claim
from tests.integration.locks import answered_while_held
from tests.integration.orders.conftest import ORDER, act, customer, key, orders_of, place


def test_key_in_flight_is_409(client: TestClient, settings: Settings, caller: Issued) -> None:
    idem, body = key(), {**ORDER, "customer_id": customer()}
    scope = claim(PLACE_SCOPE, idem, {}, client_id=caller.client_id).scope
    with psycopg.connect(settings.dsn("app")) as holder:  # holds the key, uncommitted
        holder.execute(
            "SELECT claimed FROM orders.claim_key(%s, %s, '\\x00', '50ms', 201, '{}')",
            (scope, idem),
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
    assert orders_of(db, body["customer_id"]) == 1


def test_crash_before_commit_leaves_nothing(client: TestClient, db: Any, caller: Issued) -> None:
    idem, who = key(), customer()
    module = "tests.integration.orders.crasher"
    crasher = [sys.executable, "-m", module, str(caller.client_id), idem, who]
    proc = subprocess.Popen(crasher, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        pid, order_id = proc.stdout.readline().split()  # the insert ran, the transaction is open
        body = {**ORDER, "customer_id": who, "items": ORDER["items"][:1]}  # the crasher's request
        assert (
            client.post("/orders", json=body, headers={"Idempotency-Key": idem}).status_code == 409
        )
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while db.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (int(pid),)).fetchone():
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
    assert retry.json()["id"] != order_id
    assert orders_of(db, who) == 1


HELD_S = 0.3  # well past the in-flight bound (api_idempotency_wait_ms, 50 ms)


def test_fresh_key_waits_out_a_table_lock(client: TestClient, settings: Settings, db: Any) -> None:
    """A lock on the keys' table (as an extension lock or vacuum's truncation would be) held
    past the bound delays a fresh key's claim; it is never answered 409 for it."""
    body, idem = {**ORDER, "customer_id": customer()}, key()
    with ThreadPoolExecutor(1) as pool, psycopg.connect(settings.dsn("owner")) as holder:
        holder.execute("LOCK TABLE orders.idempotency_keys IN SHARE ROW EXCLUSIVE MODE")
        pending = pool.submit(client.post, "/orders", json=body, headers={"Idempotency-Key": idem})
        answered_under_lock, response = answered_while_held(pending, holder, db, HELD_S)
    assert (answered_under_lock, response.status_code) == (False, 201), response.text
    assert "idempotent-replayed" not in response.headers
    assert orders_of(db, body["customer_id"]) == 1


def test_fresh_key_of_a_transition_waits_out_a_table_lock(
    client: TestClient, settings: Settings, db: Any
) -> None:
    order = place(client)
    with ThreadPoolExecutor(1) as pool, psycopg.connect(settings.dsn("owner")) as holder:
        holder.execute("LOCK TABLE orders.idempotency_keys IN SHARE ROW EXCLUSIVE MODE")
        pending = pool.submit(act, client, order["id"], "pay")
        answered_under_lock, response = answered_while_held(pending, holder, db, HELD_S)
    assert (answered_under_lock, response.status_code) == (False, 200), response.text
    assert response.json()["status"] == "PAID"


def advisory_lock_of(settings: Settings, scope: str, idem: str) -> tuple[int, int]:
    """The advisory lock orders.claim_key takes for (scope, idem), read from pg_locks inside a
    claim that is rolled back (classid and objid as the two int4 keys)."""
    with psycopg.connect(settings.dsn("owner")) as conn:
        conn.execute(
            "SELECT claimed FROM orders.claim_key(%s, %s, '\\x00', '50ms', 201, '{}')",
            (scope, idem),
        )
        row = conn.execute(
            "SELECT classid::int4, objid::int4 FROM pg_locks WHERE locktype = 'advisory'"
            " AND objsubid = 2 AND pid = pg_backend_pid()"
        ).fetchone()
        conn.rollback()
    assert row is not None
    return int(row[0]), int(row[1])


def test_a_key_sharing_its_lock_with_another_in_flight_is_claimed(
    client: TestClient, settings: Settings, db: Any, caller: Issued
) -> None:
    """Another key in flight whose hash is this key's (held here without any key row) makes
    the claim wait the bound, then the INSERT decides: 201, not 409."""
    body, idem = {**ORDER, "customer_id": customer()}, key()
    scope = claim(PLACE_SCOPE, idem, {}, client_id=caller.client_id).scope
    with psycopg.connect(settings.dsn("app")) as holder:
        holder.execute(
            "SELECT pg_advisory_xact_lock(%s, %s)", advisory_lock_of(settings, scope, idem)
        )
        started = time.monotonic()
        response = client.post("/orders", json=body, headers={"Idempotency-Key": idem})
        waited = time.monotonic() - started
        holder.rollback()
    assert response.status_code == 201, response.text
    assert waited >= 0.05  # it waited for the lock, the whole bound
    assert orders_of(db, body["customer_id"]) == 1
