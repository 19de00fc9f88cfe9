"""The order state machine: PLACED→PAID→SHIPPED, and PLACED|PAID→CANCELLED."""

from dataclasses import dataclass
from enum import StrEnum


class OrderStatus(StrEnum):
    """Where an order is in its life."""

    PLACED = "PLACED"
    PAID = "PAID"
    SHIPPED = "SHIPPED"
    CANCELLED = "CANCELLED"


class Action(StrEnum):
    """A state change a client can ask for."""

    PAY = "pay"
    SHIP = "ship"
    CANCEL = "cancel"


class EventType(StrEnum):
    """The outbox event each change emits (contract section 4)."""

    PLACED = "OrderPlaced"
    PAID = "OrderPaid"
    SHIPPED = "OrderShipped"
    CANCELLED = "OrderCancelled"


@dataclass(frozen=True)
class Transition:
    """One allowed change: from any of `sources` to `target`, announced as `event_type`."""

    sources: frozenset[OrderStatus]
    target: OrderStatus
    event_type: EventType


TRANSITIONS: dict[Action, Transition] = {
    Action.PAY: Transition(frozenset({OrderStatus.PLACED}), OrderStatus.PAID, EventType.PAID),
    Action.SHIP: Transition(frozenset({OrderStatus.PAID}), OrderStatus.SHIPPED, EventType.SHIPPED),
    Action.CANCEL: Transition(
        frozenset({OrderStatus.PLACED, OrderStatus.PAID}),
        OrderStatus.CANCELLED,
        EventType.CANCELLED,
    ),
}


class InvalidTransitionError(Exception):
    """The action is not allowed from the order's current status."""

    def __init__(self, current: OrderStatus, action: Action) -> None:
        super().__init__(f"cannot {action} an order that is {current}")
        self.current = current
        self.action = action


def next_status(current: OrderStatus, action: Action) -> OrderStatus:
    """Return the status after `action`, or raise InvalidTransitionError."""
    transition = TRANSITIONS[action]
    if current not in transition.sources:
        raise InvalidTransitionError(current, action)
    return transition.target
