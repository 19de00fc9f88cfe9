"""End to end: HTTP → Postgres outbox → Debezium → Kafka (read_committed) → Spark → analytics."""

import uuid

import httpx

from onceflow.settings import Settings
from tests.e2e import analytics, exactly_once
from tests.e2e.kafka_reader import read_events
from tests.e2e.orders import Expected, post_history


def test_every_change_reaches_kafka_once_and_analytics_exactly(
    api: httpx.Client, analyst: analytics.Conn, settings: Settings
) -> None:
    analytics.barrier(api, analyst)
    before = exactly_once.baseline(settings)
    expected = Expected()
    post_history(api, uuid.uuid4().hex[:8], expected, orders=16)
    exactly_once.assert_exactly_once(settings, expected, before)


def test_traceparent_follows_the_order_onto_kafka(api: httpx.Client, settings: Settings) -> None:
    trace = f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-01"
    body = {
        "customer_id": "e2e-trace",
        "currency": "EUR",
        "items": [{"sku": "SKU-1", "quantity": 1, "unit_price_cents": 100}],
    }
    response = api.post(
        "/orders", json=body, headers={"Idempotency-Key": str(uuid.uuid4()), "traceparent": trace}
    )
    assert response.status_code == 201, response.text
    (event,) = read_events(
        settings.kafka_bootstrap,
        settings.topic,
        keys=[response.json()["id"]],
        expected=1,
        timeout=120,
    )
    assert event.headers["traceparent"] == trace
