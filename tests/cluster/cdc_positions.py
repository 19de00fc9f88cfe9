"""Where the change-data capture stands: the replication slot's confirmed position in Postgres,
the last position Connect committed to Kafka for the connector (its offsets topic, read
committed), and how far the outbox topic has grown. The slot must never be ahead of Kafka: a
position Postgres forgot but Kafka never got would be changes lost."""

import json
import time

import psycopg
from confluent_kafka import Consumer

from onceflow import paths
from onceflow.settings import Settings
from onceflow.settings.kafka_auth import client_config
from onceflow.watermarks import watermarks
from stack import node_configs
from tests.e2e.kafka_reader import TopicReader


def _offsets_topic() -> str:
    template = (paths.ROOT / node_configs.WORKER_TEMPLATE).read_text()
    return node_configs.properties(template)["offset.storage.topic"]


def slot_confirmed(settings: Settings) -> int:
    """The slot's confirmed_flush_lsn, as a byte position."""
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as conn:
        row = conn.execute(
            "SELECT (confirmed_flush_lsn - '0/0')::bigint FROM pg_replication_slots"
            " WHERE slot_name = %s",
            (settings.replication_slot,),
        ).fetchone()
    assert row is not None, f"no replication slot {settings.replication_slot}"
    return int(row[0])


def kafka_committed(settings: Settings) -> int:
    """The last LSN Connect committed for the connector (its latest committed offset record)."""
    reader = TopicReader(settings.kafka_bootstrap, [_offsets_topic()])
    try:
        records = reader.read_to(reader.high_watermarks(), time.monotonic() + 60)
    finally:
        reader.close()
    ours = [
        r
        for r in records
        if r.key is not None and r.value and json.loads(r.key)[0] == settings.connector_name
    ]
    assert ours, f"no committed offset of {settings.connector_name} in {_offsets_topic()}"
    return int(json.loads(max(ours, key=lambda r: r.offset).value or b"{}")["lsn"])


def outbox_end(settings: Settings) -> int:
    """The outbox topic's high watermarks, summed: grows while Connect publishes."""
    consumer = Consumer({**client_config(settings.kafka_bootstrap, "tests"), "group.id": "n/a"})
    try:
        topic = consumer.list_topics(settings.topic, timeout=10).topics[settings.topic]
        return sum(watermarks(consumer, settings.topic, p, timeout=10)[1] for p in topic.partitions)
    finally:
        consumer.close()
