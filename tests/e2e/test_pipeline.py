"""End to end: HTTP → Postgres outbox → Debezium → Kafka (read_committed) → Spark → analytics."""

import uuid

import httpx

from services.config import Settings
from tests.e2e import analytics, exactly_once
from tests.e2e.orders import Expected, post_history


def test_every_change_reaches_kafka_once_and_analytics_exactly(
    api: httpx.Client, analyst: analytics.Conn, settings: Settings
) -> None:
    analytics.barrier(api, analyst)
    before = exactly_once.baseline(analyst)
    expected = Expected()
    post_history(api, uuid.uuid4().hex[:8], expected, orders=16)
    exactly_once.assert_exactly_once(settings, analyst, expected, before)
