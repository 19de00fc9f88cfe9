"""The server-computed total, and the test oracle's order (request limits: test_validation)."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from onceflow.contract import Action, OrderStatus
from services.orders.domain.ids import uuid7
from services.orders.domain.order import LineItem, total_cents
from tests.oracle.orders import InvalidTransitionError, Order

T0 = datetime(2026, 11, 22, 10, 15, 3, 123456, tzinfo=UTC)
items_strategy = st.lists(
    st.builds(
        LineItem,
        sku=st.from_regex(r"\A[A-Za-z0-9._:-]{1,64}\Z"),
        quantity=st.integers(1, 10_000),
        unit_price_cents=st.integers(0, 100_000_000),
    ),
    min_size=1,
    max_size=100,
)


def make_order(*items: LineItem) -> Order:
    return Order(uuid7(), "c-42", "EUR", OrderStatus.PLACED, items, T0, T0)


def test_total_of_the_contract_example() -> None:
    assert make_order(LineItem("SKU-1", 2, 1250)).total_cents == 2500


@given(items_strategy)
def test_total_is_the_sum_of_subtotals(items: list[LineItem]) -> None:
    expected = sum(i.quantity * i.unit_price_cents for i in items)
    assert total_cents(tuple(items)) == expected
    assert make_order(*items).total_cents == expected
    assert expected < 2**53  # exact in every JSON consumer


def test_apply_changes_status_and_updated_at_only() -> None:
    order = make_order(LineItem("A", 1, 1))
    later = T0 + timedelta(seconds=1)
    paid = order.apply(Action.PAY, later)
    assert (paid.status, paid.updated_at, paid.created_at) == (OrderStatus.PAID, later, T0)
    assert order.status is OrderStatus.PLACED
    with pytest.raises(InvalidTransitionError):
        paid.apply(Action.PAY, later)
