"""Two concurrent transitions on one order: exactly one wins, the other is answered 409."""

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
    by_action = dict(zip(("pay", "cancel"), (r.status_code for r in responses), strict=True))
    final = client.get(f"/orders/{order_id}").json()["status"]
    # Run one after the other, pay then cancel both win (a legal sequence); interleaved on the
    # row, only one does. Either way the final status is the one the answers say.
    assert by_action in (
        {"pay": 200, "cancel": 409},
        {"pay": 409, "cancel": 200},
        {"pay": 200, "cancel": 200},
    )
    assert final == ("PAID" if by_action == {"pay": 200, "cancel": 409} else "CANCELLED")
