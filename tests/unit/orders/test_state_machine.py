"""The state machine of contract section 3: onceflow.contract.TRANSITIONS, read through the
test oracle's next_status."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from onceflow.contract import TRANSITIONS, Action, EventType, OrderStatus
from tests.oracle.orders import InvalidTransitionError, next_status

ALLOWED = {
    (OrderStatus.PLACED, Action.PAY): OrderStatus.PAID,
    (OrderStatus.PAID, Action.SHIP): OrderStatus.SHIPPED,
    (OrderStatus.PLACED, Action.CANCEL): OrderStatus.CANCELLED,
    (OrderStatus.PAID, Action.CANCEL): OrderStatus.CANCELLED,
}


@pytest.mark.parametrize(("current", "action"), list(ALLOWED))
def test_allowed_transitions(current: OrderStatus, action: Action) -> None:
    assert next_status(current, action) is ALLOWED[(current, action)]


@given(st.sampled_from(OrderStatus), st.sampled_from(Action))
def test_everything_else_is_rejected(current: OrderStatus, action: Action) -> None:
    if (current, action) in ALLOWED:
        return
    with pytest.raises(InvalidTransitionError) as caught:
        next_status(current, action)
    assert caught.value.current is current
    assert str(caught.value) == f"cannot {action} an order that is {current}"


@pytest.mark.parametrize("final", [OrderStatus.SHIPPED, OrderStatus.CANCELLED])
def test_final_states_accept_nothing(final: OrderStatus) -> None:
    for action in Action:
        with pytest.raises(InvalidTransitionError):
            next_status(final, action)


def test_each_action_announces_its_event() -> None:
    assert {a: t.event_type for a, t in TRANSITIONS.items()} == {
        Action.PAY: EventType.PAID,
        Action.SHIP: EventType.SHIPPED,
        Action.CANCEL: EventType.CANCELLED,
    }
    assert {e.value for e in EventType} == {
        "OrderPlaced",
        "OrderPaid",
        "OrderShipped",
        "OrderCancelled",
    }
