"""The outbox topic, created up front so partitions and settings are ours, not defaults."""

from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from onceflow.settings import Settings

PARTITIONS = 3


def ensure_outbox_topic(settings: Settings) -> None:
    """Create the order-event topic if it does not exist yet (idempotent)."""
    admin = AdminClient({"bootstrap.servers": settings.kafka_bootstrap})
    existing = admin.list_topics(timeout=30).topics
    if settings.topic in existing:
        return
    futures = admin.create_topics(
        # -1: the broker's default replication (1 locally, 3 in production).
        [NewTopic(settings.topic, num_partitions=PARTITIONS, replication_factor=-1)]
    )
    for future in futures.values():
        future.result(timeout=30)
