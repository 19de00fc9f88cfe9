"""Each committed change writes exactly one outbox event in its transaction (seen in the WAL)."""

from datetime import datetime
from typing import Any
from uuid import UUID

import orjson
from fastapi.testclient import TestClient

from onceflow.contract import Action, EventType, OrderStatus
from services.orders.domain.order import LineItem
from tests.integration.orders.conftest import act, key, place
from tests.integration.orders.wal import Transaction, Wal
from tests.oracle.orders import Order, envelope, order_document

TRACE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def as_order(doc: dict[str, Any]) -> Order:
    return Order(
        UUID(doc["id"]),
        doc["customer_id"],
        doc["currency"],
        OrderStatus(doc["status"]),
        tuple(LineItem(**i) for i in doc["items"]),
        datetime.fromisoformat(doc["created_at"]),
        datetime.fromisoformat(doc["updated_at"]),
    )


def touched(tx: Transaction) -> set[str]:
    return {v["id"] for op in ("INSERT", "UPDATE") for v in tx.of("orders.orders", op)}


def test_each_change_is_one_event_in_its_transaction(client: TestClient, wal: Wal, db: Any) -> None:
    placed = place(client)
    oid = placed["id"]
    paid = act(client, oid, "pay", headers={"traceparent": TRACE}).json()
    idem = key()
    shipped = act(client, oid, "ship", idem).json()
    assert act(client, oid, "ship", idem).headers["idempotent-replayed"] == "true"  # no event
    assert act(client, oid, "cancel").status_code == 409  # no event
    # The test oracle predicts each change from the order before it.
    order = as_order(placed)
    for action, answer in ((Action.PAY, paid), (Action.SHIP, shipped)):
        order = order.apply(action, datetime.fromisoformat(answer["updated_at"]))
        assert answer == order_document(order)
    ours = [t for t in wal.transactions() if oid in touched(t)]
    assert len(ours) == 3
    expected = [
        (placed, EventType.PLACED, "INSERT"),
        (paid, EventType.PAID, "UPDATE"),
        (shipped, EventType.SHIPPED, "UPDATE"),
    ]
    for tx, (order, event_type, op) in zip(ours, expected, strict=True):
        inserted, deleted = tx.of("orders.outbox", "INSERT"), tx.of("orders.outbox", "DELETE")
        assert len(inserted) == 1, tx
        assert [d["id"] for d in deleted] == [inserted[0]["id"]]
        assert len(tx.of("orders.orders", op)) == 1
        row = inserted[0]
        assert (row["aggregatetype"], row["aggregateid"], row["type"]) == ("order", oid, event_type)
        payload = orjson.loads(row["payload"])
        occurred = datetime.fromisoformat(order["updated_at"])
        assert payload == envelope(as_order(order), event_type, UUID(row["id"]), occurred)
        assert len(tx.of("orders.idempotency_keys", "INSERT")) == 1
    assert ours[1].of("orders.outbox", "INSERT")[0]["traceparent"] == TRACE
    assert ours[0].of("orders.outbox", "INSERT")[0]["traceparent"].startswith("00-")
    assert db.execute("SELECT count(*) FROM orders.outbox").fetchone() == (0,)
