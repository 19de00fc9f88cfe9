"""Order rules: identifiers, limits and the server-computed total."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.orders.domain.ids import uuid7
from services.orders.domain.order import InvalidOrderError, LineItem, Order, total_cents
from services.orders.domain.status import Action, InvalidTransitionError, OrderStatus

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


@pytest.mark.parametrize(
    ("sku", "quantity", "price"),
    [
        ("", 1, 0),
        ("a b", 1, 0),
        ("x" * 65, 1, 0),
        ("é", 1, 0),
        ("A", 0, 0),
        ("A", 10_001, 0),
        ("A", 1, -1),
        ("A", 1, 100_000_001),
    ],
)
def test_invalid_lines(sku: str, quantity: int, price: int) -> None:
    with pytest.raises(InvalidOrderError):
        LineItem(sku, quantity, price)


def test_limits_are_inclusive() -> None:
    LineItem("x" * 64, 10_000, 100_000_000)
    LineItem("a.b_c:d-1", 1, 0)


@pytest.mark.parametrize("count", [0, 101])
def test_item_count_limits(count: int) -> None:
    with pytest.raises(InvalidOrderError):
        make_order(*[LineItem("A", 1, 1)] * count)


def test_customer_id_rules() -> None:
    with pytest.raises(InvalidOrderError):
        Order(uuid7(), "c 42", "EUR", OrderStatus.PLACED, (LineItem("A", 1, 1),), T0, T0)


def test_apply_changes_status_and_updated_at_only() -> None:
    order = make_order(LineItem("A", 1, 1))
    later = T0 + timedelta(seconds=1)
    paid = order.apply(Action.PAY, later)
    assert (paid.status, paid.updated_at, paid.created_at) == (OrderStatus.PAID, later, T0)
    assert order.status is OrderStatus.PLACED
    with pytest.raises(InvalidTransitionError):
        paid.apply(Action.PAY, later)
