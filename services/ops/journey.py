"""One order's journey through the pipeline, hop by hop (contract section 6), as a query.

API commit (orders.orders) -> each event's Kafka record (partition, offset, timestamp) -> the
micro-batch that counted it (aggregation.applied_events + applied_batches, written in the batch's
own transaction) -> its notification (produced when the notifications group's committed offset
on that partition is past the event's offset: the processor commits input offsets in the same
Kafka transaction as the notifications).

Journeys live as long as the de-duplication window (aggregation.applied_events forgets older
events; the ledger of batches is pruned sooner, so an old event's batch may lack committed_at).
Reads use the least-privileged roles that can: `app` for orders.orders and `spark` for the job's
bookkeeping in schema aggregation (each in a read-only transaction: analysts cannot see that
schema), and the notifications group's offsets are only read (the consumer never subscribes, so
it never joins the group).
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from onceflow.settings import NotificationSettings, Settings, get_notification_settings
from onceflow.settings.kafka_auth import client_config
from services.notifications.transform import notification_id

SQL = Path(__file__).parent / "sql"
ORDER_QUERY = (SQL / "journey_order.sql").read_text()
EVENTS_QUERY = (SQL / "journey_events.sql").read_text()


def iso(at: datetime | None) -> str | None:
    """`2026-11-23T13:22:25.123456Z` (UTC, microseconds), or None."""
    if at is None:
        return None
    return at.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None or end is None else round((end - start).total_seconds(), 6)


@dataclass(frozen=True)
class Batch:
    """The aggregation micro-batch that counted an event (committed_at: None once the ledger
    row was pruned)."""

    query_id: str
    batch_id: int
    committed_at: datetime | None


@dataclass(frozen=True)
class Notification:
    """An event's notification: its id (UUIDv5 of the event id) and whether it was produced
    (None: Kafka did not answer, see Journey.notes)."""

    id: str
    produced: bool | None


@dataclass(frozen=True)
class EventHop:
    """One event of the order, as far as it got."""

    event_id: str
    event_type: str | None
    occurred_at: datetime  # the API's commit of the change
    kafka_partition: int | None
    kafka_offset: int | None
    kafka_timestamp: datetime | None
    batch: Batch | None
    notification: Notification

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON types (see Journey.as_dict)."""
        applied = self.batch.committed_at if self.batch else None
        return {
            "event_id": self.event_id,
            "event_type": self.event_type,
            "occurred_at": iso(self.occurred_at),
            "kafka": {
                "partition": self.kafka_partition,
                "offset": self.kafka_offset,
                "timestamp": iso(self.kafka_timestamp),
            },
            "batch": None
            if self.batch is None
            else {
                "query_id": self.batch.query_id,
                "batch_id": self.batch.batch_id,
                "committed_at": iso(self.batch.committed_at),
            },
            "notification": {
                "id": self.notification.id,
                "produced": self.notification.produced,
            },
            "seconds_after_commit": {
                "kafka": _seconds(self.occurred_at, self.kafka_timestamp),
                "applied": _seconds(self.occurred_at, applied),
            },
        }


@dataclass(frozen=True)
class Journey:
    """An order's journey: its API commits and every event the aggregation job applied.

    `as_dict()` returns only JSON types (str, int, float, bool, None, list, dict), times as
    ISO 8601 UTC strings (`2026-11-23T13:22:25.123456Z`)::

        {"order_id": "<uuid>", "topic": "outbox.event.order",
         "order": {"status": "PAID", "created_at": "...Z", "updated_at": "...Z"} | null,
         "events": [                       # oldest first
            {"event_id": "<uuid>", "event_type": "OrderPlaced", "occurred_at": "...Z",
             "kafka": {"partition": 0, "offset": 42, "timestamp": "...Z"},
             "batch": {"query_id": "<uuid>", "batch_id": 7, "committed_at": "...Z" | null}
                      | null,
             "notification": {"id": "<uuid>", "produced": true | false | null},
             "seconds_after_commit": {"kafka": 0.41, "applied": 1.9}}],
         "notes": ["..."]}                 # e.g. Kafka did not answer: produced is null

    `order` is null when orders.orders has no such row (the events alone are known);
    `to_json()` is the same as a JSON text.
    """

    order_id: str
    topic: str
    status: str | None
    created_at: datetime | None
    updated_at: datetime | None
    events: tuple[EventHop, ...]
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The journey as plain JSON types (the class docstring shows the shape)."""
        return {
            "order_id": self.order_id,
            "topic": self.topic,
            "order": None
            if self.status is None
            else {
                "status": self.status,
                "created_at": iso(self.created_at),
                "updated_at": iso(self.updated_at),
            },
            "events": [e.as_dict() for e in self.events],
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        """as_dict() as JSON text."""
        return json.dumps(self.as_dict())


def parse_order_id(text: str) -> str:
    """The canonical form of an order id; ValueError with a readable message when malformed."""
    try:
        return str(UUID(text.strip()))
    except (ValueError, AttributeError):
        raise ValueError(
            f"{text!r} is not an order id: order ids are UUIDs such as "
            "0f8fad5b-d9cb-469f-a165-70867728950e"
        ) from None


def _order_row(settings: Settings, order_id: str) -> tuple[Any, ...] | None:
    with psycopg.connect(settings.dsn("app")) as conn:
        conn.read_only = True
        return conn.execute(ORDER_QUERY, (order_id,)).fetchone()


def _event_rows(settings: Settings, order_id: str) -> list[tuple[Any, ...]]:
    # The ledger, as its read-only role (migration 0020).
    with psycopg.connect(settings.dsn("observer")) as conn:
        conn.read_only = True
        return conn.execute(EVENTS_QUERY, (order_id,)).fetchall()


def committed_offsets(
    settings: Settings, notify: NotificationSettings, partitions: Iterable[int], timeout: float
) -> dict[int, int | None]:
    """The notifications group's committed offset per partition of the order topic (None: none
    committed). Raises KafkaException when Kafka does not answer within `timeout` seconds."""
    wanted = sorted(set(partitions))
    if not wanted:
        return {}
    consumer = Consumer(
        {
            **client_config(settings.kafka_bootstrap, "ops"),
            "group.id": notify.notify_group,
            "enable.auto.commit": False,
            "socket.timeout.ms": max(1000, int(timeout * 1000)),
            # An unreachable broker is reported once, in Journey.notes, not logged per retry.
            "log_level": 0,
        }
    )
    try:
        found = consumer.committed([TopicPartition(settings.topic, p) for p in wanted], timeout)
    finally:
        consumer.close()
    return {tp.partition: (tp.offset if tp.offset >= 0 else None) for tp in found}


def journey(
    *,
    settings: Settings,
    order_id: str,
    notify: NotificationSettings | None = None,
    kafka_timeout: float = 5.0,
) -> Journey | None:
    """The journey of order `order_id`; None when neither the API nor the job knows it.

    ValueError (a readable sentence) when `order_id` is not a UUID. A database that cannot be
    reached raises psycopg.OperationalError; Kafka not answering only leaves each notification's
    `produced` unknown (None) with a note.
    """
    oid = parse_order_id(order_id)
    order = _order_row(settings, oid)
    rows = _event_rows(settings, oid)
    if order is None and not rows:
        return None
    notes: list[str] = []
    offsets: dict[int, int | None] = {}
    try:
        offsets = committed_offsets(
            settings,
            notify or get_notification_settings(),
            (r[3] for r in rows if r[3] is not None),
            kafka_timeout,
        )
    except KafkaException as exc:
        error = exc.args[0] if exc.args else exc
        reason = error.str() if isinstance(error, KafkaError) else str(error)
        notes.append(
            f"Kafka did not say which notifications were produced within {kafka_timeout:g} s "
            f"({reason}): whether they were is unknown"
        )
    events = tuple(_hop(row, offsets, known=not notes) for row in rows)
    status, created_at, updated_at = order if order is not None else (None, None, None)
    return Journey(oid, settings.topic, status, created_at, updated_at, events, tuple(notes))


def _hop(row: tuple[Any, ...], offsets: dict[int, int | None], *, known: bool) -> EventHop:
    (event_id, event_type, occurred_at, partition, offset, kafka_ts, query_id, batch_id,
     committed_at) = row  # fmt: skip
    produced: bool | None = None
    if known and partition is not None and offset is not None:
        committed = offsets.get(partition)
        produced = committed is not None and committed > offset
    return EventHop(
        event_id=str(event_id),
        event_type=event_type,
        occurred_at=occurred_at,
        kafka_partition=partition,
        kafka_offset=offset,
        kafka_timestamp=kafka_ts,
        batch=None if query_id is None else Batch(query_id, batch_id, committed_at),
        notification=Notification(notification_id(str(event_id)), produced),
    )
