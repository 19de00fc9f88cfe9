"""An order's updated_at, and its events' occurred_at, strictly increase with each committed
change, whenever the changing transaction started (migration 0014): a cancel whose transaction
started before a pay, and that sees the pay committed, is later than the pay."""

from datetime import datetime
from uuid import UUID

import orjson
import psycopg
from fastapi.testclient import TestClient

from onceflow.client_keys import Issued
from onceflow.contract import Action, EventType
from onceflow.settings import Settings
from tests.integration.orders.conftest import act, place
from tests.integration.orders.late_start import begin, transition
from tests.integration.orders.wal import Wal


def test_a_change_in_a_transaction_started_before_the_previous_one_is_later(
    client: TestClient, caller: Issued, settings: Settings, wal: Wal
) -> None:
    order_id = place(client)["id"]
    with psycopg.connect(settings.dsn("app")) as late:
        started = begin(late)  # the cancel's transaction starts first...
        paid = act(client, order_id, "pay")  # ...a pay starts after it and commits...
        assert paid.status_code == 200, paid.text
        paid_at = datetime.fromisoformat(paid.json()["updated_at"])
        assert started < paid_at
        # ...then the cancel runs in the first transaction: it sees PAID, which it may cancel.
        outcome, status, cancelled = transition(
            late, caller.client_id, UUID(order_id), Action.CANCEL
        )
        late.commit()
    assert (outcome, status, cancelled["status"]) == ("changed", 200, "CANCELLED")
    cancelled_at = datetime.fromisoformat(cancelled["updated_at"])
    assert paid_at < cancelled_at
    assert client.get(f"/orders/{order_id}").json() == cancelled
    # The events downstream orders by (aggregation.order_state: "only to a later event").
    occurred = {
        row["type"]: datetime.fromisoformat(orjson.loads(row["payload"])["occurred_at"])
        for tx in wal.transactions()
        for row in tx.of("orders.outbox", "INSERT")
        if row["aggregateid"] == order_id
    }
    assert occurred[EventType.PLACED] < occurred[EventType.PAID] < occurred[EventType.CANCELLED]
    assert (occurred[EventType.PAID], occurred[EventType.CANCELLED]) == (paid_at, cancelled_at)
