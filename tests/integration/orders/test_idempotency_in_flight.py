"""A key whose first request has not completed: answered 409 while it runs, one order however
many race on it, and nothing left behind when its client dies before committing."""

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
from tests.integration.orders.conftest import ORDER, customer, key, orders_of


def test_key_in_flight_is_409(client: TestClient, settings: Settings, caller: Issued) -> None:
    idem, body = key(), {**ORDER, "customer_id": customer()}
    scope = claim(PLACE_SCOPE, idem, {}, client_id=caller.client_id).scope
    with psycopg.connect(settings.dsn("app")) as holder:  # holds the key, uncommitted
        holder.execute(
            "INSERT INTO orders.idempotency_keys VALUES (%s, %s, '\\x00', 201, '{}', now())",
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
