"""Reading the topic once: each run reads every partition from where the last run stopped
(reconcile.topic_positions) to its end as of the run's start, read_committed, and stores each
valid event's facts in reconcile.topic_events in the transaction that moves the position. A
record is never read twice by a finished run; a record that is not a valid v1 event (a dead
letter, counted nowhere) is skipped."""

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import psycopg
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from onceflow import events
from onceflow.settings.kafka_auth import client_config
from onceflow.watermarks import watermarks

SQL = Path(__file__).parent / "sql"
POLL_S = 0.5
CHUNK = 5000  # records per consume call
NEVER = datetime.min.replace(tzinfo=UTC)  # complete_from of a partition read from offset 0


@dataclass(frozen=True)
class Read:
    """What one run read: records (valid events stored) and whether every partition reached
    the end it had when the run started."""

    records: int
    events: int
    caught_up: bool


@dataclass
class _Partition:
    start: int
    end: int
    complete_from: datetime
    position: int
    last_record: int | None = None
    done: bool = False


def _consumer(bootstrap: str) -> Consumer:
    return Consumer(
        {
            **client_config(bootstrap, "ops"),
            "group.id": "onceflow-ops-reconcile",  # never commits: positions live in Postgres
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
        }
    )


def _partitions(
    consumer: Consumer, conn: psycopg.Connection[Any], topic: str, timeout: float
) -> dict[int, _Partition]:
    stored = {
        p: (offset, since)
        for p, offset, since in conn.execute((SQL / "positions.sql").read_text(), (topic,))
    }
    described = consumer.list_topics(topic, timeout=timeout).topics[topic]
    if described.error is not None:
        raise KafkaException(described.error)
    found = {}
    for partition in sorted(described.partitions):
        low, high = watermarks(consumer, topic, partition, timeout=timeout)
        offset, since = stored.get(partition, (None, NEVER))
        start = low if offset is None else max(offset, low)
        # Records the reconciler never read were deleted (read first at a later offset, or down
        # longer than the retention): the partition is complete only from what is read now.
        gap = (offset is None and low > 0) or (offset is not None and offset < low)
        found[partition] = _Partition(
            start=start,
            end=high,
            complete_from=datetime.max.replace(tzinfo=UTC) if gap else since,
            position=start,
        )
    return found


def _row(message: Message) -> tuple[Any, ...] | None:
    headers = cast(list[tuple[str, bytes | None]] | None, message.headers())
    try:
        event = events.parse(message.key(), message.value(), headers)
    except events.InvalidEventError:
        return None
    return (
        event.event_id,
        event.order_id,
        event.event_type,
        event.occurred_at,
        event.currency,
        event.total_cents,
        message.partition(),
        message.offset(),
    )


def _store(
    conn: psycopg.Connection[Any],
    topic: str,
    rows: list[tuple[Any, ...]],
    parts: dict[int, _Partition],
    first_at: dict[int, datetime],
) -> None:
    """The rows read and every partition's position, in one transaction."""
    with conn.transaction():
        if rows:
            conn.execute((SQL / "stage_events.sql").read_text())
            with conn.cursor().copy(
                "COPY reconcile_read (event_id, order_id, event_type, occurred_at, currency, "
                "total_cents, kafka_partition, kafka_offset) FROM STDIN"
            ) as copy:
                for row in rows:
                    copy.write_row(row)
            conn.execute((SQL / "store_events.sql").read_text())
        for number, part in parts.items():
            if part.position == part.start and not part.done:
                continue  # nothing read of it yet: saved once it has
            since = part.complete_from
            if since == datetime.max.replace(tzinfo=UTC):
                since = first_at.get(number, datetime.now(UTC))
            conn.execute(
                (SQL / "save_position.sql").read_text(),
                {
                    "topic": topic,
                    "partition": number,
                    "next_offset": part.position,
                    "last_record": part.last_record,
                    "complete_from": since,
                },
            )


def read_new(conn: psycopg.Connection[Any], *, bootstrap: str, topic: str, budget_s: float) -> Read:
    """Read every partition from its stored position to its end as of now (at most budget_s
    seconds), storing events and positions as it goes."""
    deadline = time.monotonic() + budget_s
    consumer = _consumer(bootstrap)
    try:
        parts = _partitions(consumer, conn, topic, timeout=min(budget_s, 10.0))
        pending = {p for p, part in parts.items() if part.start < part.end}
        for number in set(parts) - pending:
            parts[number].done = True
        consumer.assign([TopicPartition(topic, p, parts[p].start) for p in sorted(pending)])
        records = stored = 0
        first_at: dict[int, datetime] = {}
        while pending and time.monotonic() < deadline:
            rows = []
            for message in consumer.consume(CHUNK, POLL_S):
                number = cast(int, message.partition())
                part = parts.get(number)
                if part is None or part.done:
                    continue
                error, offset = message.error(), cast(int, message.offset())
                if error is not None and error.code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(error)
                if error is None and offset < part.end:
                    records += 1
                    part.position, part.last_record = offset + 1, offset
                    first_at.setdefault(number, _timestamp(message))
                    if (row := _row(message)) is not None:
                        rows.append(row)
                else:  # at the end it had at the start (or past it)
                    part.position = max(part.position, min(offset, part.end))
                    part.done = True
                    pending.discard(number)
                    consumer.pause([TopicPartition(topic, number)])
            _store(conn, topic, rows, parts, first_at)
            stored += len(rows)
        return Read(records=records, events=stored, caught_up=not pending)
    finally:
        consumer.close()


def _timestamp(message: Message) -> datetime:
    _, millis = message.timestamp()
    return datetime.fromtimestamp(millis / 1000, UTC)
