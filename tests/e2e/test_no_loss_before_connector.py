"""Writes accepted before a connector's first start are not lost: the slot holds them.

A second connector gets a slot the test creates (as the stack does on a fresh machine), then
orders are posted, and only then is the connector registered. Every order must arrive.
"""

import uuid
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from confluent_kafka.admin import AclBindingFilter, AclOperation, ResourceType

from onceflow.settings import Settings
from onceflow.settings.kafka_auth import get_kafka_auth_settings
from onceflow.settings.ops import get_ops_settings
from stack import connector, kafka_security, postgres
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


@pytest.fixture
def topic_prefix(settings: Settings) -> Iterator[str]:
    """A topic prefix of the test's own that Kafka Connect's principal may write while the test
    runs (its ACLs name the outbox topic alone), granted and taken back as the broker."""
    prefix = f"test.fresh.{uuid.uuid4().hex[:8]}"
    auth = get_kafka_auth_settings()
    if not auth.kafka_sasl:
        yield prefix
        return
    grant = kafka_security.Grant(
        "connect",
        ResourceType.TOPIC,
        prefix,
        (
            AclOperation.WRITE,
            AclOperation.DESCRIBE,
            AclOperation.CREATE,
            AclOperation.DESCRIBE_CONFIGS,
        ),
        prefixed=True,
    )
    admin = kafka_security.admin(settings.kafka_bootstrap, auth)
    kafka_security.ensure_acls(admin, [grant])
    try:
        yield prefix
    finally:
        filters = [
            AclBindingFilter(
                b.restype,
                b.name,
                b.resource_pattern_type,
                b.principal,
                b.host,
                b.operation,
                b.permission_type,
            )
            for b in kafka_security.acl_bindings([grant])
        ]
        for future in admin.delete_acls(filters).values():
            future.result(timeout=30)


def test_orders_posted_before_first_start_all_arrive(
    api: httpx.Client, settings: Settings, fresh_slot: str, topic_prefix: str
) -> None:
    orders = [
        place(api, f"fresh-{i}", "EUR", [{"sku": "SKU-1", "quantity": 1, "unit_price_cents": 100}])
        for i in range(10)
    ]
    name = f"fresh-start-test-{uuid.uuid4().hex[:8]}"
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
