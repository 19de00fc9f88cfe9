"""End to end: HTTP → Postgres outbox → Debezium → Kafka (read_committed) → Spark → analytics."""

import random
import uuid
from collections import Counter
from typing import Any

import httpx

from services.config import Settings
from stack.waiting import wait_for
from tests.e2e import analytics
from tests.e2e.kafka_reader import read_events
from tests.e2e.orders import EVENT_OF_ACTION, Expected, act, place


def _history(api: httpx.Client, run: str, expected: Expected) -> list[dict[str, Any]]:
    rng = random.Random(run)
    customers = [f"e2e-{run}-c{i}" for i in range(4)]
    skus = [f"E2E-{run}-S{i}" for i in range(5)]
    orders = []
    for _ in range(16):
        items = [
            {"sku": sku, "quantity": rng.randint(1, 5), "unit_price_cents": rng.randint(0, 5000)}
            for sku in rng.sample(skus, rng.randint(1, 3))
        ]
        order = place(api, rng.choice(customers), rng.choice(["EUR", "USD", "JPY"]), items)
        expected.record("OrderPlaced", order)
        for action in rng.choice([[], ["pay"], ["pay", "ship"], ["cancel"], ["pay", "cancel"]]):
            order = act(api, order["id"], action)
            expected.record(EVENT_OF_ACTION[action], order)
        orders.append(order)
    return orders


def test_every_change_reaches_kafka_once_and_analytics_exactly(
    api: httpx.Client, analyst: analytics.Conn, settings: Settings
) -> None:
    analytics.barrier(api, analyst)
    daily_before = analytics.daily_sales(analyst)
    expected = Expected()
    orders = _history(api, uuid.uuid4().hex[:8], expected)

    events = read_events(
        settings.kafka_bootstrap,
        settings.topic,
        keys=[o["id"] for o in orders],
        expected=len(expected.events),
        timeout=120,
    )
    assert Counter((e.key, e.value["event_type"]) for e in events) == Counter(expected.events)
    assert all(count == 1 for count in Counter(e.headers["id"] for e in events).values())
    for event in events:
        assert event.headers["id"] == event.value["event_id"]
        assert event.headers["eventType"] == event.value["event_type"]
        assert event.value["order"]["id"] == event.key
        assert event.value["schema_version"] == 1
    for order_id in {e.key for e in events}:
        assert len({e.partition for e in events if e.key == order_id}) == 1

    wait_for(
        lambda: analytics.customer_sales(analyst, list(expected.customers)) == expected.customers,
        what="customer_sales to equal the posted orders",
        timeout=120,
    )
    assert analytics.product_sales(analyst, list(expected.products)) == expected.products
    gained = analytics.daily_sales(analyst)
    gained.subtract(daily_before)
    assert all(value >= 0 for value in gained.values())
    assert +gained == +expected.daily
