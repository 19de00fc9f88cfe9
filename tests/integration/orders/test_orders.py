"""Placing, reading and transitioning orders through the API on the real database (listing:
test_list_orders.py)."""

import pytest
from fastapi.testclient import TestClient

from onceflow.contract import Action, OrderStatus
from tests.integration.orders.conftest import ORDER, act, customer, key, place
from tests.oracle.orders import InvalidTransitionError


def test_place_order_returns_the_contract_shape(client: TestClient) -> None:
    body = {**ORDER, "customer_id": customer()}
    response = client.post("/orders", json=body, headers={"Idempotency-Key": key()})
    assert response.status_code == 201
    assert response.headers["content-type"] == "application/json"
    order = response.json()
    assert response.headers["location"] == f"/orders/{order['id']}"
    assert "idempotent-replayed" not in response.headers
    assert set(order) == {
        "id",
        "customer_id",
        "currency",
        "status",
        "total_cents",
        "items",
        "created_at",
        "updated_at",
    }
    assert order["status"] == "PLACED"
    assert order["total_cents"] == 2 * 1250 + 99
    assert order["items"] == body["items"]
    assert order["created_at"] == order["updated_at"]
    assert order["created_at"].endswith("Z")
    assert client.get(response.headers["location"]).json() == order


def test_the_client_cannot_set_the_total(client: TestClient) -> None:
    response = client.post(
        "/orders", json={**ORDER, "total_cents": 1}, headers={"Idempotency-Key": key()}
    )
    assert response.status_code == 422


def test_full_life_cycle(client: TestClient) -> None:
    order = place(client)
    paid = act(client, order["id"], "pay")
    assert paid.status_code == 200
    assert paid.json()["status"] == "PAID"
    assert paid.json()["updated_at"] > order["updated_at"]
    shipped = act(client, order["id"], "ship").json()
    assert shipped["status"] == "SHIPPED"
    assert client.get(f"/orders/{order['id']}").json() == shipped


@pytest.mark.parametrize(
    ("path", "action", "current"),
    [
        ([], "ship", "PLACED"),
        (["pay"], "pay", "PAID"),
        (["cancel"], "pay", "CANCELLED"),
        (["cancel"], "cancel", "CANCELLED"),
        (["pay", "ship"], "cancel", "SHIPPED"),
    ],
)
def test_forbidden_transitions_are_409(
    client: TestClient, path: list[str], action: str, current: str
) -> None:
    order = place(client)
    for step in path:
        assert act(client, order["id"], step).status_code == 200
    response = act(client, order["id"], action)
    assert response.status_code == 409
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["order_status"] == current
    expected = InvalidTransitionError(OrderStatus(current), Action(action))  # the test oracle's
    assert response.json()["detail"] == str(expected)
    assert client.get(f"/orders/{order['id']}").json()["status"] == current


def test_unknown_order_is_404(client: TestClient) -> None:
    missing = "01a20114-a2ad-7eaf-9c28-000000000000"
    for response in (client.get(f"/orders/{missing}"), act(client, missing, "pay")):
        assert response.status_code == 404
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["status"] == 404
