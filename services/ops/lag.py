"""How far behind each hop is: the replication slot (Connect) and the topic (the Spark job)."""

from dataclasses import dataclass
from pathlib import Path

import psycopg
from confluent_kafka import Consumer, TopicPartition

from onceflow.settings import Settings

SLOT_QUERY = (Path(__file__).parent / "sql" / "slot.sql").read_text()


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
    partition: int
    end_offset: int
    applied_through: int | None

    @property
    def behind(self) -> int:
        """Offsets not yet applied; transaction markers make this at most a few high when idle."""
        return self.end_offset - (
            self.applied_through + 1 if self.applied_through is not None else 0
        )


def slot_lag(*, settings: Settings) -> SlotLag | None:
    """The slot's state and the WAL it retains (None when the slot is missing)."""
    with psycopg.connect(settings.dsn("analyst")) as conn:
        row = conn.execute(SLOT_QUERY, (settings.replication_slot,)).fetchone()
    if row is None:
        return None
    active, wal_status, retained, behind, safe = row
    return SlotLag(bool(active), str(wal_status), int(retained), int(behind), safe)


def topic_lag(*, settings: Settings) -> list[PartitionLag]:
    """Per partition: the topic's end offset and the last offset the job's ledger applied."""
    with psycopg.connect(settings.dsn("analyst")) as conn:
        applied: dict[int, int] = dict(
            conn.execute(
                "SELECT key::int, max((value ->> 'last')::bigint) FROM analytics.applied_batches, "
                "jsonb_each(offsets) WHERE topic = %s GROUP BY key",
                (settings.topic,),
            ).fetchall()
        )
    consumer = Consumer({"bootstrap.servers": settings.kafka_bootstrap, "group.id": "onceflow-ops"})
    try:
        partitions = (
            consumer.list_topics(settings.topic, timeout=10).topics[settings.topic].partitions
        )
        return [
            PartitionLag(
                partition,
                consumer.get_watermark_offsets(TopicPartition(settings.topic, partition), 10)[1],
                applied.get(partition),
            )
            for partition in sorted(partitions)
        ]
    finally:
        consumer.close()
