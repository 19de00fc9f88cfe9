"""How far behind each hop is: the replication slot (Connect) and the topic (the Spark job)."""

from dataclasses import dataclass

import psycopg
from confluent_kafka import Consumer, TopicPartition

from onceflow.settings import Settings


@dataclass(frozen=True)
class SlotLag:
    active: bool
    bytes_behind: int


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
    """WAL the connector has not confirmed yet (None when the slot is missing)."""
    with psycopg.connect(settings.dsn("analyst")) as conn:
        row = conn.execute(
            "SELECT active, pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint "
            "FROM pg_replication_slots WHERE slot_name = %s",
            (settings.replication_slot,),
        ).fetchone()
    return SlotLag(active=bool(row[0]), bytes_behind=int(row[1] or 0)) if row else None


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
