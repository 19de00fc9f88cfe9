"""GET /orders: newest first, keyset pages, customer and status filters, parameter errors."""

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.integration.orders.conftest import act, customer, place


def _pages(client: TestClient, **params: Any) -> list[list[dict[str, Any]]]:
    pages, cursor = [], None
    while True:
        query = {**params, **({"cursor": cursor} if cursor else {})}
        page = client.get("/orders", params=query).json()
        pages.append(page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            return pages


def test_list_is_newest_first_with_keyset_pages_and_filters(client: TestClient) -> None:
    who = customer()
    ids = [place(client, customer_id=who)["id"] for _ in range(5)]
    act(client, ids[1], "pay")
    pages = _pages(client, customer_id=who, limit=2)
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [o["id"] for p in pages for o in p] == ids[::-1]
    paid = client.get("/orders", params={"customer_id": who, "status": "PAID"}).json()
    assert [o["id"] for o in paid["items"]] == [ids[1]]
    assert paid["next_cursor"] is None
    assert len(client.get("/orders", params={"limit": 1}).json()["items"]) == 1


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 201},
        {"status": "LOST"},
        {"cursor": "not-a-cursor"},
        {"customer_id": "a b"},
    ],
)
def test_invalid_list_parameters_are_422(client: TestClient, params: dict[str, Any]) -> None:
    response = client.get("/orders", params=params)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
