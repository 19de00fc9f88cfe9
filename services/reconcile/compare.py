"""The comparison itself, pure: each source's values per (day, currency, event type, measure)
in, the differences out.

Measures: `events` (how many), `cents` (Σ the orders' total_cents), `refunded_cents` (the
OrderCancelled events of orders that had been paid) and `latest` (orders whose latest event is
of this type on this day). The topic says all four; the analytics tables the first three (the
columns of daily_sales); the order tables what they still know: every OrderPlaced (the order's
created_at, currency and total) and each order's latest event (its status and updated_at).
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date

from onceflow.contract import EventType

Key = tuple[date, str, str, str]  # day, currency, event type, measure
SOURCES = ("orders", "topic", "analytics")
MEASURES = ("events", "cents", "refunded_cents", "latest")
# daily_sales's column of each (event type, measure) the analytics tables say.
ANALYTICS_COLUMNS: dict[tuple[str, str], str] = {
    (EventType.PLACED, "events"): "orders_placed",
    (EventType.PAID, "events"): "orders_paid",
    (EventType.SHIPPED, "events"): "orders_shipped",
    (EventType.CANCELLED, "events"): "orders_cancelled",
    (EventType.PLACED, "cents"): "placed_cents",
    (EventType.PAID, "cents"): "paid_cents",
    (EventType.SHIPPED, "cents"): "shipped_cents",
    (EventType.CANCELLED, "cents"): "cancelled_cents",
    (EventType.CANCELLED, "refunded_cents"): "refunded_cents",
}


def says(source: str, event_type: str, measure: str) -> bool:
    """Whether `source` has a value for this measure (missing rows then count as 0)."""
    if source == "topic":
        return True
    if source == "analytics":
        return (event_type, measure) in ANALYTICS_COLUMNS
    return measure == "latest" or (event_type == EventType.PLACED and measure != "refunded_cents")


@dataclass(frozen=True)
class Difference:
    """One (day, currency, event type, measure) on which the sources disagree."""

    day: date
    currency: str
    event_type: str
    measure: str
    orders: int | None
    topic: int | None
    analytics: int | None

    @property
    def key(self) -> Key:
        """Its (day, currency, event type, measure)."""
        return (self.day, self.currency, self.event_type, self.measure)


def differences(
    values: Mapping[str, Mapping[Key, int]], compared: Iterable[str] = SOURCES
) -> list[Difference]:
    """Every key on which the compared sources that have a value for it do not all agree,
    sorted by day, currency, event type and measure."""
    sources = [s for s in SOURCES if s in set(compared)]
    keys = sorted({key for source in sources for key in values.get(source, {})})
    found = []
    for key in keys:
        _, _, event_type, measure = key
        said = {s: values.get(s, {}).get(key, 0) for s in sources if says(s, event_type, measure)}
        if len(set(said.values())) > 1:
            found.append(Difference(*key, *(said.get(s) for s in SOURCES)))
    return found


def involved(topic_orders: set[str], order_side: set[str] | None) -> list[str]:
    """The orders a difference names: those only one of the topic and the order tables holds
    when both say the measure and their sets differ; else every order of the group."""
    if order_side is not None and order_side != topic_orders:
        return sorted(topic_orders ^ order_side)
    return sorted(topic_orders | (order_side or set()))
