"""Request validation of POST /orders: contract limits, allow-list, unknown fields, strict types."""

from typing import Any

import pytest
from pydantic import ValidationError

from onceflow.settings import ApiSettings, get_api_settings
from services.orders.entrypoints.schemas import OrderIn

ITEM = {"sku": "SKU-1", "quantity": 2, "unit_price_cents": 1250}
BODY = {"customer_id": "c-42", "currency": "EUR", "items": [ITEM]}


def test_contract_example_is_valid() -> None:
    assert OrderIn.model_validate(BODY).items[0].quantity == 2


@pytest.mark.parametrize(
    "change",
    [
        {"extra": 1},
        {"currency": "XYZ"},
        {"currency": "eur"},
        {"customer_id": ""},
        {"customer_id": "a/b"},
        {"items": []},
        {"items": [ITEM] * 101},
        {"items": [{**ITEM, "quantity": "2"}]},
        {"items": [{**ITEM, "quantity": 2.0}]},
        {"items": [{**ITEM, "quantity": True}]},
        {"items": [{**ITEM, "colour": "red"}]},
        {"items": [{**ITEM, "unit_price_cents": 100_000_001}]},
        {"items": [{**ITEM, "unit_price_cents": -1}]},
        {"items": [{**ITEM, "quantity": 0}]},
        {"items": [{**ITEM, "quantity": 10_001}]},
        {"items": [{**ITEM, "sku": ""}]},
        {"items": [{**ITEM, "sku": "a b"}]},
        {"items": [{**ITEM, "sku": "x" * 65}]},
        {"items": [{**ITEM, "sku": "é"}]},
        {"items": [{**ITEM, "sku": "SKU-1\n"}]},
        {"customer_id": "c 42"},
    ],
)
def test_rejected(change: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        OrderIn.model_validate({**BODY, **change})


def test_limits_are_inclusive() -> None:
    edge = {"sku": "a.b_c:d-" + "x" * 56, "quantity": 10_000, "unit_price_cents": 100_000_000}
    low = {"sku": "a", "quantity": 1, "unit_price_cents": 0}
    order = OrderIn.model_validate({**BODY, "items": [edge, low] * 50})
    assert len(order.items) == 100


def test_currency_allow_list_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONCEFLOW_API_CURRENCIES", "sek, nok")
    get_api_settings.cache_clear()
    try:
        assert get_api_settings().api_currencies == ("SEK", "NOK")
        OrderIn.model_validate({**BODY, "currency": "SEK"})
        with pytest.raises(ValidationError):
            OrderIn.model_validate(BODY)
    finally:
        get_api_settings.cache_clear()


def test_settings_reject_bad_currency_codes() -> None:
    with pytest.raises(ValidationError):
        ApiSettings(api_currencies="EURO")


def test_settings_reject_an_in_flight_wait_the_statement_timeout_would_cut() -> None:
    with pytest.raises(ValidationError, match="IDEMPOTENCY_WAIT_MS must be below"):
        ApiSettings(api_pg_statement_timeout_ms=100, api_idempotency_wait_ms=100)
    ApiSettings(api_pg_statement_timeout_ms=300, api_idempotency_wait_ms=50)
