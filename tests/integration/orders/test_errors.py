"""Every error is RFC 9457 problem+json: 400, 404, 405, 413, 415, 422."""

from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.integration.orders.conftest import ORDER, act, key, place

JSON = {"content-type": "application/json"}


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem: dict[str, Any] = response.json()
    assert problem["status"] == status
    assert {"type", "title", "detail"} <= set(problem)
    return problem


def test_malformed_json_is_400(client: TestClient) -> None:
    response = client.post(
        "/orders", content=b'{"customer_id":', headers={**JSON, "Idempotency-Key": key()}
    )
    assert assert_problem(response, 400)["type"].endswith("malformed-json")


@pytest.mark.parametrize("value", [None, "", "x" * 256, "tab\there", "del\x7f"])
def test_missing_or_malformed_key_is_400(client: TestClient, value: str | None) -> None:
    headers = {} if value is None else {"Idempotency-Key": value}
    response = client.post("/orders", json=ORDER, headers=headers)
    assert "idempotency-key" in assert_problem(response, 400)["type"]
    order_id = place(client)["id"]
    assert_problem(client.post(f"/orders/{order_id}/pay", headers=headers), 400)


def test_a_255_character_key_is_accepted(client: TestClient) -> None:
    longest = key().ljust(255, "k")
    response = client.post("/orders", json=ORDER, headers={"Idempotency-Key": longest})
    assert response.status_code == 201


def test_body_over_64_kib_is_413(client: TestClient) -> None:
    big = {**ORDER, "customer_id": "x" * 70_000}
    assert_problem(client.post("/orders", json=big, headers={"Idempotency-Key": key()}), 413)

    def chunks() -> Any:
        yield b'{"customer_id": "'
        for _ in range(20):
            yield b"x" * 4096

    streamed = client.post("/orders", content=chunks(), headers={**JSON, "Idempotency-Key": key()})
    assert_problem(streamed, 413)


@pytest.mark.parametrize("media", ["text/plain", "application/x-www-form-urlencoded", None])
def test_wrong_media_type_is_415(client: TestClient, media: str | None) -> None:
    headers = {"Idempotency-Key": key()} | ({"content-type": media} if media else {})
    response = client.post("/orders", content=b'{"customer_id": "c"}', headers=headers)
    assert_problem(response, 415)


def test_validation_errors_are_422_with_field_errors(client: TestClient) -> None:
    body = {**ORDER, "colour": "red", "items": [{"sku": "S", "quantity": 0, "unit_price_cents": 1}]}
    problem = assert_problem(
        client.post("/orders", json=body, headers={"Idempotency-Key": key()}), 422
    )
    pointers = {e["pointer"]: e for e in problem["errors"]}
    assert set(pointers) == {"/colour", "/items/0/quantity"}
    assert pointers["/colour"]["location"] == "body"


def test_transitions_take_no_body(client: TestClient) -> None:
    order_id = place(client)["id"]
    assert_problem(act(client, order_id, "pay", json={"amount": 1}), 422)
    assert_problem(act(client, order_id, "pay", content=b"{", headers=JSON), 400)
    assert act(client, order_id, "pay", json={}).status_code == 200


def test_unknown_path_and_method(client: TestClient) -> None:
    assert_problem(client.get("/nowhere"), 404)
    assert_problem(client.get("/orders/not-a-uuid"), 422)
    response = client.delete("/orders")
    assert_problem(response, 405)
    assert "GET" in response.headers["allow"]
