"""Writes accepted before a connector's first start are not lost: the slot holds them.

A second connector gets a slot the test creates (as the stack does on a fresh machine), then
orders are posted, and only then is the connector registered. Every order must arrive.
"""

import uuid
from collections.abc import Iterator

import httpx
import psycopg
import pytest

from onceflow.settings import Settings
from onceflow.settings.ops import get_ops_settings
from stack import connector, postgres
from stack.waiting import wait_for
from tests.e2e.kafka_reader import read_events
from tests.e2e.orders import place


@pytest.fixture
def fresh_slot(settings: Settings) -> Iterator[str]:
    slot = f"onceflow_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(
        postgres.superuser_conninfo(settings, settings.pg_database), autocommit=True
    ) as conn:
        conn.execute("SELECT pg_create_logical_replication_slot(%s, 'pgoutput')", (slot,))
        yield slot
        # The deleted connector's task lets go of the slot shortly after; a slot left behind
        # would hold WAL forever.
        released = "SELECT NOT active FROM pg_replication_slots WHERE slot_name = %s"
        wait_for(
            lambda: conn.execute(released, (slot,)).fetchone() == (True,),
            what="the test slot to be released",
            timeout=60,
        )
        conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))


def test_orders_posted_before_first_start_all_arrive(
    api: httpx.Client, settings: Settings, fresh_slot: str
) -> None:
    orders = [
        place(api, f"fresh-{i}", "EUR", [{"sku": "SKU-1", "quantity": 1, "unit_price_cents": 100}])
        for i in range(10)
    ]
    name = f"fresh-start-test-{uuid.uuid4().hex[:8]}"
    topic_prefix = f"test.fresh.{uuid.uuid4().hex[:8]}"
    config = connector.connector_config() | {
        "name": name,
        "slot.name": fresh_slot,
        "topic.prefix": topic_prefix,
        "transforms.outbox.route.topic.replacement": f"{topic_prefix}.order",
    }
    url = f"{settings.connect_url}/connectors/{name}"
    auth = get_ops_settings().auth()
    answer = httpx.put(f"{url}/config", json=config, timeout=60, auth=auth)
    assert answer.status_code in (200, 201)
    try:
        events = read_events(
            settings.kafka_bootstrap,
            f"{topic_prefix}.order",
            keys=[o["id"] for o in orders],
            expected=len(orders),
            timeout=120,
        )
    finally:
        httpx.delete(url, timeout=60, auth=auth)
    assert sorted(e.key for e in events) == sorted(o["id"] for o in orders)
