"""Every event the API writes is a valid v1 event: the outbox rows of a real order's changes, as
the connector turns them into records (key: aggregateid; headers id, eventType), pass
onceflow.events.parse, the reader derived from the one definition (schema_version included)."""

from fastapi.testclient import TestClient

from onceflow.contract import EventType
from onceflow.events import parse
from tests.integration.orders.conftest import act, place
from tests.integration.orders.wal import Wal


def test_each_event_of_an_order_is_a_valid_v1_event(client: TestClient, wal: Wal) -> None:
    order = place(client)
    assert act(client, order["id"], "pay").status_code == 200
    assert act(client, order["id"], "cancel").status_code == 200
    rows = [
        row
        for tx in wal.transactions()
        for row in tx.of("orders.outbox", "INSERT")
        if row["aggregateid"] == order["id"]
    ]
    events = [
        parse(
            row["aggregateid"].encode(),
            row["payload"].encode(),
            [("id", row["id"].encode()), ("eventType", row["type"].encode())],
        )
        for row in rows
    ]
    assert [(e.event_type, e.order_id) for e in events] == [
        (event_type, order["id"])
        for event_type in (EventType.PLACED, EventType.PAID, EventType.CANCELLED)
    ]
