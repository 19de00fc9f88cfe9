"""Concurrent transitions on one order: two that overlap on the row cannot both win (the loser
is answered 409 with the winner's status); racing ones end in the status their answers imply."""

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from onceflow.settings import Settings
from tests.integration.orders.conftest import act, place

QUEUED = """
    WITH direct AS (SELECT pid FROM pg_stat_activity
                     WHERE %(blocker)s = ANY (pg_blocking_pids(pid)))
    SELECT count(*) FROM pg_stat_activity
     WHERE pid IN (SELECT pid FROM direct)
        OR pg_blocking_pids(pid) && ARRAY(SELECT pid FROM direct)
"""


def wait_for_blocked(db: Any, blocker: int, count: int) -> None:
    """Wait until `count` sessions queue behind `blocker` (directly or behind its waiters)."""
    deadline = time.monotonic() + 10
    while db.execute(QUEUED, {"blocker": blocker}).fetchone()[0] < count:
        assert time.monotonic() < deadline, "the transitions never queued on the row"
        time.sleep(0.02)


def test_pay_and_cancel_queued_on_one_row_one_wins(
    client: TestClient, db: Any, settings: Settings
) -> None:
    order_id = place(client)["id"]
    with psycopg.connect(settings.dsn("app")) as holder, ThreadPoolExecutor(2) as pool:
        holder.execute("SELECT 1 FROM orders.orders WHERE id = %s FOR UPDATE", (order_id,))
        futures = [pool.submit(act, client, order_id, a) for a in ("pay", "cancel")]
        try:
            wait_for_blocked(db, holder.info.backend_pid, 2)  # both read PLACED, wait for the row
        finally:
            holder.commit()
        responses = [f.result(timeout=30) for f in futures]
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200, 409]
    winner = next(r for r in responses if r.status_code == 200).json()["status"]
    loser = next(r for r in responses if r.status_code == 409).json()
    assert loser["type"].endswith("concurrent-transition")
    assert loser["order_status"] == winner
    assert client.get(f"/orders/{order_id}").json()["status"] == winner


@pytest.mark.parametrize("round_", range(10))
def test_racing_pay_and_cancel_leave_the_status_their_answers_imply(
    client: TestClient, round_: int
) -> None:
    order_id = place(client)["id"]
    with ThreadPoolExecutor(2) as pool:
        responses = list(pool.map(lambda a: act(client, order_id, a), ("pay", "cancel")))
    pay, cancel = responses
    final = client.get(f"/orders/{order_id}").json()["status"]
    # Whether the two overlapped is up to the scheduler: one after the other, pay then cancel
    # both win (a legal sequence); overlapping on the row, only one does (the test above).
    if pay.status_code == cancel.status_code == 200:
        assert (pay.json()["status"], cancel.json()["status"], final) == (
            "PAID",
            "CANCELLED",
            "CANCELLED",
        )
        assert pay.json()["updated_at"] < cancel.json()["updated_at"]
        return
    assert sorted((pay.status_code, cancel.status_code)) == [200, 409]
    winner = next(r for r in responses if r.status_code == 200).json()
    loser = next(r for r in responses if r.status_code == 409).json()
    assert final == winner["status"] == loser["order_status"]
