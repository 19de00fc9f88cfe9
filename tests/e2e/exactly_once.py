"""The end-to-end check: every change a test made is on the topic once (read_committed), is
counted once in every analytics table, and became exactly one notification."""

from collections import Counter
from dataclasses import dataclass
from typing import TypeVar

from onceflow.settings import Settings, get_notification_settings
from stack.waiting import wait_for
from tests.e2e import analytics
from tests.e2e.kafka_reader import Event, read_events
from tests.e2e.orders import Expected

K = TypeVar("K")


@dataclass(frozen=True)
class Baseline:
    """The global tables before the test's orders (taken after a barrier)."""

    daily: Counter[tuple[str, str, str]]
    status: Counter[str]


def baseline(conn: analytics.Conn) -> Baseline:
    return Baseline(analytics.daily_sales(conn), analytics.status_counts(conn))


def _gained(after: Counter[K], before: Counter[K]) -> Counter[K]:
    gained = Counter(after)
    gained.subtract(before)
    assert all(value >= 0 for value in gained.values()), gained
    return +gained


def assert_exactly_once(
    settings: Settings,
    conn: analytics.Conn,
    expected: Expected,
    before: Baseline,
    *,
    timeout: float = 180,
) -> None:
    wait_for(
        lambda: analytics.customer_sales(conn, list(expected.customers)) == expected.customers,
        what="customer_sales to equal the posted orders",
        timeout=timeout,
    )
    assert analytics.product_sales(conn, list(expected.products)) == expected.products
    assert _gained(analytics.daily_sales(conn), before.daily) == +expected.daily
    assert _gained(analytics.status_counts(conn), before.status) == Counter(
        expected.status.values()
    )

    events = read_events(
        settings.kafka_bootstrap,
        settings.topic,
        keys=list(expected.status),
        expected=len(expected.events),
        timeout=timeout,
    )
    assert Counter((e.key, e.value["event_type"]) for e in events) == Counter(expected.events)
    assert all(count == 1 for count in Counter(e.headers["id"] for e in events).values())
    for event in events:
        assert event.headers["id"] == event.value["event_id"]
        assert event.headers["eventType"] == event.value["event_type"]
        assert event.value["order"]["id"] == event.key
        assert event.value["schema_version"] == 1
    for order_id in expected.status:
        assert len({e.partition for e in events if e.key == order_id}) == 1
    _assert_notified_once(settings, events, list(expected.customers), timeout)


def _assert_notified_once(
    settings: Settings, events: list[Event], customers: list[str], timeout: float
) -> None:
    """Each event has exactly one notification (contract 4b), each order's in event order."""
    notifications = read_events(
        settings.kafka_bootstrap,
        get_notification_settings().notify_topic,
        keys=customers,
        expected=len(events),
        timeout=timeout,
    )
    notified = Counter(n.value["event_id"] for n in notifications)
    assert notified == Counter(e.value["event_id"] for e in events)
    for order_id in {e.key for e in events}:
        sent = [e.value["event_id"] for e in events if e.key == order_id]
        assert [
            n.value["event_id"] for n in notifications if n.value["order_id"] == order_id
        ] == sent
