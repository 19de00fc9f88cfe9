"""`onceflow-ops trace` on the running stack: an order placed and paid through the API is
followed through every hop (API commit -> Kafka record -> the aggregation batch that counted it
-> its notification), and each hop is checked against its source.

Needs the stack to run this branch's aggregation job (migration 0009 and the journey columns).
"""

import json
import uuid
from datetime import datetime
from typing import Any

import httpx
import psycopg
from confluent_kafka import Consumer, TopicPartition
from typer.testing import CliRunner

from onceflow.settings import Settings
from onceflow.settings.kafka_auth import client_config
from services.notifications.transform import notification_id
from services.ops.cli import app
from services.ops.journey import Journey, journey
from stack.waiting import NotReadyError, wait_for
from tests.e2e.orders import act, place


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def record_at(settings: Settings, partition: int, offset: int) -> dict[str, Any]:
    """The value of the order topic's record at (partition, offset), read_committed."""
    consumer = Consumer(
        {
            **client_config(settings.kafka_bootstrap, "tests"),
            "group.id": f"e2e-trace-{uuid.uuid4()}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(settings.topic, partition, offset)])
        message = consumer.poll(30)
        assert message is not None, f"no record at {partition}/{offset}"
        assert message.error() is None, message.error()
        assert message.offset() == offset
        value: dict[str, Any] = json.loads(message.value() or b"")
        return value
    finally:
        consumer.close()


def test_trace_follows_an_order_through_every_hop(
    api: httpx.Client, settings: Settings, analyst: psycopg.Connection[tuple[object, ...]]
) -> None:
    moved = analyst.execute("SELECT to_regnamespace('aggregation') IS NOT NULL").fetchone()
    assert moved == (True,), "the stack's database lacks migration 0018: `make up` this code"
    items = [{"sku": "TRACE-1", "quantity": 2, "unit_price_cents": 150}]
    placed = place(api, f"trace-{uuid.uuid4().hex[:12]}", "EUR", items)
    paid = act(api, placed["id"], "pay")
    found: list[Journey] = []

    def complete() -> bool:
        j = journey(settings=settings, order_id=placed["id"])
        found[:] = [j] if j is not None else []
        return (
            j is not None
            and len(j.events) == 2
            and all(e.batch is not None and e.notification.produced for e in j.events)
        )

    try:
        wait_for(complete, what="the order applied and notified", timeout=240, interval=1)
    except NotReadyError as exc:
        raise AssertionError(
            f"journey after 240 s: {found[0].to_json() if found else None}"
        ) from exc
    (j,) = found
    assert (j.status, j.order_id) == ("PAID", placed["id"])
    assert j.created_at == at(placed["created_at"])
    assert j.updated_at == at(paid["updated_at"])
    assert [e.event_type for e in j.events] == ["OrderPlaced", "OrderPaid"]
    assert j.events[1].occurred_at == j.updated_at
    for hop in j.events:
        assert hop.kafka_partition is not None
        assert hop.kafka_offset is not None
        record = record_at(settings, hop.kafka_partition, hop.kafka_offset)
        assert (record["event_id"], record["order"]["id"]) == (hop.event_id, placed["id"])
        assert hop.kafka_timestamp is not None
        # Kafka timestamps are whole milliseconds: the record's may be the commit's, truncated.
        truncated = hop.occurred_at.replace(microsecond=hop.occurred_at.microsecond // 1000 * 1000)
        assert hop.kafka_timestamp >= truncated, (hop.kafka_timestamp, hop.occurred_at)
        assert hop.batch is not None
        assert hop.batch.committed_at is not None
        assert hop.batch.committed_at >= hop.occurred_at
        with psycopg.connect(settings.dsn("spark")) as job:  # the ledger is the job's
            job.read_only = True
            ledger = job.execute(
                "SELECT offsets -> %s FROM aggregation.applied_batches "
                "WHERE query_id = %s AND batch_id = %s",
                (str(hop.kafka_partition), hop.batch.query_id, hop.batch.batch_id),
            ).fetchone()
        assert ledger is not None
        span: Any = ledger[0]
        assert span["first"] <= hop.kafka_offset <= span["last"]
        assert hop.notification.id == notification_id(hop.event_id)

    runner = CliRunner()
    shown = runner.invoke(app, ["trace", placed["id"]])
    assert shown.exit_code == 0, shown.output
    for hop in j.events:
        for text in (hop.event_id, f"offset {hop.kafka_offset}", hop.notification.id):
            assert text in shown.output
    as_json = runner.invoke(app, ["trace", placed["id"], "--json"])
    assert as_json.exit_code == 0, as_json.output
    doc = json.loads(as_json.output)
    assert [e["notification"]["produced"] for e in doc["events"]] == [True, True]

    unknown = runner.invoke(app, ["trace", str(uuid.uuid4())])
    assert unknown.exit_code == 1
    assert "No order" in unknown.output
    malformed = runner.invoke(app, ["trace", "not-an-order"])
    assert malformed.exit_code == 2
