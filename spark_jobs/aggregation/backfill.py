"""Before a backfill: the tables it rebuilds must be empty (--reset empties them), and the
topic's extent, for the progress log."""

import logging

import psycopg
from confluent_kafka import Consumer

from onceflow.schema.analytics import JOB_TABLES
from onceflow.settings.kafka_auth import client_config
from onceflow.watermarks import watermarks

log = logging.getLogger("onceflow.aggregation")

TABLES = tuple(table.fullname for table in JOB_TABLES)  # schema-qualified


class BackfillRefusedError(RuntimeError):
    """The analytics tables are not empty and --reset was not given."""


def topic_offsets(bootstrap: str, topic: str) -> dict[int, tuple[int, int]]:
    """partition -> (low, high) watermark of the topic right now."""
    consumer = Consumer(
        {
            **client_config(bootstrap, "aggregation"),
            "group.id": "onceflow-backfill-probe",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        meta = consumer.list_topics(topic, timeout=10).topics[topic]
        result = {}
        for partition in meta.partitions:
            low, high = watermarks(consumer, topic, partition, timeout=10)
            result[partition] = (low, high)
        return result
    finally:
        consumer.close()


def prepare_backfill_tables(dsn: str, *, reset: bool) -> None:
    """Backfill writes into empty tables: refuse non-empty ones unless reset (then empty them)."""
    with psycopg.connect(dsn) as conn:
        used = [
            t
            for t in TABLES
            if conn.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchone() == (True,)
        ]
        if used and not reset:
            raise BackfillRefusedError(
                f"analytics tables are not empty ({', '.join(used)}): stop the streaming job, "
                "then run the backfill with --reset to rebuild them from the topic"
            )
        if used:
            log.warning("--reset: emptying analytics tables %s", ", ".join(used))
            conn.execute("TRUNCATE " + ", ".join(TABLES))
