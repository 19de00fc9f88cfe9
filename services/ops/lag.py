"""How far behind each hop is: the replication slot (Connect) and the topic (the Spark job).

The job reads `read_committed`, so it is caught up when nothing but transaction markers (and
records of aborted transactions) lies between its position and the partition's last stable
offset: the end offset counts a commit marker after every transaction, and an open
transaction's records are not readable yet.
"""

import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
from confluent_kafka import Consumer, IsolationLevel, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from onceflow.settings import Settings
from onceflow.settings.kafka_auth import client_config
from services.ops.replay import QUERY_ID as REPLAY_QUERY_ID

SLOT_QUERY = (Path(__file__).parent / "sql" / "slot.sql").read_text()
APPLIED_QUERY = (
    "SELECT key::int, max((value ->> 'last')::bigint) FROM aggregation.applied_batches, "
    "jsonb_each(offsets) WHERE topic = %s GROUP BY key"
)
# The job's batches: a dead letter's replay (query `replay`) says nothing of the job's progress.
LAST_BATCH_QUERY = (
    "SELECT max(committed_at), count(*) FROM aggregation.applied_batches"
    f" WHERE topic = %s AND query_id <> '{REPLAY_QUERY_ID}'"
)


class LagError(RuntimeError):
    """The topic could not be measured: said in one sentence."""


@dataclass(frozen=True)
class SlotLag:
    """The outbox slot: whether a connector reads it and the WAL it holds back."""

    active: bool
    wal_status: str
    retained_bytes: int
    bytes_behind: int
    safe_wal_size: int | None

    @property
    def lost(self) -> bool:
        """Postgres removed WAL the slot still needed: events in it can no longer be read."""
        return self.wal_status == "lost"


@dataclass(frozen=True)
class PartitionLag:
    """One partition of the topic against the last offset the job applied."""

    partition: int
    # The high watermark: records, commit markers, and the records of open transactions.
    end_offset: int
    # The last stable offset: where a read_committed reader stops (below any open transaction).
    stable_offset: int
    applied_through: int | None
    # Offsets from the first committed record the job has not applied to the last stable offset
    # (the markers of those pending transactions count too); 0 when only markers or aborted
    # records lie between the job's position and the last stable offset.
    behind: int

    @property
    def open_transaction(self) -> bool:
        """A transaction holds the last stable offset below the end: readers wait at it."""
        return self.stable_offset < self.end_offset


def slot_lag(*, settings: Settings) -> SlotLag | None:
    """The slot's state and the WAL it retains (None when the slot is missing)."""
    with psycopg.connect(settings.dsn("analyst")) as conn:
        row = conn.execute(SLOT_QUERY, (settings.replication_slot,)).fetchone()
    if row is None:
        return None
    active, wal_status, retained, behind, safe = row
    return SlotLag(bool(active), str(wal_status), int(retained), int(behind), safe)


def applied_offsets(*, settings: Settings) -> dict[int, int]:
    """Per partition, the last offset of the topic the job's ledger applied (schema
    aggregation, read as the ledger's read-only role, `observer`)."""
    with psycopg.connect(settings.dsn("observer")) as conn:
        conn.read_only = True
        return applied_in(conn, settings.topic)


def applied_in(conn: psycopg.Connection[Any], topic: str) -> dict[int, int]:
    """applied_offsets() on a connection of a role that may read aggregation.applied_batches."""
    return dict(conn.execute(APPLIED_QUERY, (topic,)).fetchall())


def last_batch(*, settings: Settings) -> tuple[datetime | None, int]:
    """When the job's newest batch of the topic committed (the ledger) and how many it holds."""
    with psycopg.connect(settings.dsn("observer")) as conn:
        conn.read_only = True
        row = conn.execute(LAST_BATCH_QUERY, (settings.topic,)).fetchone()
    return (None, 0) if row is None else (row[0], int(row[1]))


def topic_lag(
    *, settings: Settings, applied: Mapping[int, int] | None = None, timeout: float = 10.0
) -> list[PartitionLag]:
    """Per partition: the topic's end and stable offsets and how far the job's ledger is behind
    (`applied`: the ledger's offsets when already read)."""
    if applied is None:
        applied = applied_offsets(settings=settings)
    return partition_lags(settings.kafka_bootstrap, settings.topic, applied, timeout)


def partition_lags(
    bootstrap: str, topic: str, applied: Mapping[int, int], timeout: float = 10.0
) -> list[PartitionLag]:
    """Each partition of `topic` against `applied` (partition -> last applied offset; a
    partition missing from it was never applied and counts from its first offset)."""
    admin = AdminClient(_client_config(bootstrap))
    metadata = admin.list_topics(topic, timeout=timeout).topics[topic]
    if metadata.error is not None:
        raise LagError(f"topic {topic} cannot be read: {metadata.error.str()}")
    partitions = sorted(metadata.partitions)
    earliest = OffsetSpec.earliest()  # type: ignore[no-untyped-call]
    latest = OffsetSpec.latest()  # type: ignore[no-untyped-call]
    first = _offsets(admin, topic, partitions, earliest, timeout)
    end = _offsets(admin, topic, partitions, latest, timeout)
    stable = _offsets(admin, topic, partitions, latest, timeout, IsolationLevel.READ_COMMITTED)
    positions = {p: max(applied[p] + 1, first[p]) if p in applied else first[p] for p in end}
    pending = {p: positions[p] for p in partitions if positions[p] < stable[p]}
    unread = first_committed(bootstrap, topic, pending, timeout) if pending else {}
    return [
        PartitionLag(
            partition=p,
            end_offset=end[p],
            stable_offset=stable[p],
            applied_through=applied.get(p),
            behind=_behind(stable[p], unread.get(p)),
        )
        for p in partitions
    ]


def _behind(stable_offset: int, first_unread: int | None) -> int:
    return 0 if first_unread is None else stable_offset - first_unread


def _client_config(bootstrap: str) -> dict[str, str | int | float | bool]:
    # librdkafka logs every failed connection attempt to stderr; an unreachable Kafka is said
    # once, by the KafkaException the call raises (services/ops/output.py).
    return {**client_config(bootstrap, "ops"), "log_level": 2}


def _offsets(
    admin: AdminClient,
    topic: str,
    partitions: list[int],
    spec: OffsetSpec,
    timeout: float,
    isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
) -> dict[int, int]:
    futures = admin.list_offsets(
        {TopicPartition(topic, p): spec for p in partitions},
        isolation_level=isolation,
        request_timeout=timeout,
    )
    return {tp.partition: int(future.result().offset) for tp, future in futures.items()}


def first_committed(
    bootstrap: str, topic: str, positions: Mapping[int, int], timeout: float = 10.0
) -> dict[int, int | None]:
    """Per partition, the offset of the first committed record at or after its position, read
    as the job reads (read_committed); None when there is none before the last stable offset.
    A partition that does not answer within `timeout` counts from its position."""
    consumer = Consumer(
        {
            **_client_config(bootstrap),
            "group.id": "onceflow-ops",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    found: dict[int, int | None] = {}
    try:
        consumer.assign([TopicPartition(topic, p, offset) for p, offset in positions.items()])
        deadline = time.monotonic() + timeout
        while len(found) < len(positions) and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            partition = None if message is None else message.partition()
            if message is None or partition is None or partition in found:
                continue
            error = message.error()
            if error is None:
                found[partition] = message.offset()
            elif error.code() == KafkaError._PARTITION_EOF:
                found[partition] = None
            else:
                continue
            consumer.pause([TopicPartition(topic, partition)])
    finally:
        consumer.close()
    return {p: found.get(p, offset) for p, offset in positions.items()}
