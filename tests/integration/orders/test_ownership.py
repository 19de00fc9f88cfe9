"""Each client sees and changes only its own orders: another client's order is 404 (never 403),
lists hold only the caller's orders, and Idempotency-Keys are scoped per client."""

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from onceflow.settings import Settings
from services.orders.entrypoints.app import create_app
from tests.integration.clients import bearer, new_client
from tests.integration.orders.conftest import ORDER, act, customer, key, place


@pytest.fixture(scope="module")
def other(settings: Settings) -> Iterator[TestClient]:
    """Client B, on its own app (the module's `client` is client A)."""
    with TestClient(
        create_app(), raise_server_exceptions=False, headers=bearer(new_client(settings))
    ) as client:
        yield client


def test_another_clients_order_is_404_for_every_operation(
    client: TestClient, other: TestClient
) -> None:
    order = place(client)
    response = other.get(f"/orders/{order['id']}")
    assert response.status_code == 404
    assert response.json()["type"] == "urn:onceflow:problem:order-not-found"
    for action in ("pay", "ship", "cancel"):
        assert act(other, order["id"], action).status_code == 404, action
    assert client.get(f"/orders/{order['id']}").json() == order  # untouched


def test_lists_hold_only_the_callers_orders(client: TestClient, other: TestClient) -> None:
    who = customer()
    mine = place(client, customer_id=who)
    theirs = place(other, customer_id=who)  # the same customer id, another client
    assert [
        o["id"] for o in client.get("/orders", params={"customer_id": who}).json()["items"]
    ] == [mine["id"]]
    assert [o["id"] for o in other.get("/orders", params={"customer_id": who}).json()["items"]] == [
        theirs["id"]
    ]
    everything = other.get("/orders", params={"limit": 200}).json()["items"]
    assert mine["id"] not in {o["id"] for o in everything}


def test_the_same_idempotency_key_makes_each_client_its_own_order(
    client: TestClient, other: TestClient
) -> None:
    idem, body = key(), {**ORDER, "customer_id": customer()}
    first = client.post("/orders", json=body, headers={"Idempotency-Key": idem})
    second = other.post("/orders", json=body, headers={"Idempotency-Key": idem})
    assert (first.status_code, second.status_code) == (201, 201)
    assert "idempotent-replayed" not in second.headers
    assert first.json()["id"] != second.json()["id"]
    assert other.get(f"/orders/{second.json()['id']}").status_code == 200
    replay = client.post("/orders", json=body, headers={"Idempotency-Key": idem})
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json()["id"] == first.json()["id"]
    # A transition key is per client too: B's use of A's key on its own order is a new request.
    for order, api in ((first.json(), client), (second.json(), other)):
        paid = act(api, order["id"], "pay", f"pay-{idem}")
        assert paid.status_code == 200
        assert "idempotent-replayed" not in paid.headers
