"""The outbox topic, created up front so partitions and retention are ours, not defaults."""

from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from confluent_kafka.cimpl import NewTopic

from onceflow.settings import Settings

PARTITIONS = 3


def topic_configs(settings: Settings) -> dict[str, str]:
    """The settings of every pipeline topic that the project owns."""
    return {"retention.ms": str(settings.topic_retention_ms)}


def ensure_outbox_topic(settings: Settings) -> None:
    """Create the order-event topic, or bring an existing one's configs in line (idempotent)."""
    admin = AdminClient({"bootstrap.servers": settings.kafka_bootstrap})
    configs = topic_configs(settings)
    if settings.topic not in admin.list_topics(timeout=30).topics:
        # -1: the broker's default replication (1 locally, 3 in the cluster topology).
        new = NewTopic(settings.topic, PARTITIONS, replication_factor=-1, config=configs)
        for future in admin.create_topics([new]).values():
            future.result(timeout=30)
        return
    entries = [
        ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
        for name, value in configs.items()
    ]
    resource = ConfigResource(ResourceType.TOPIC, settings.topic, incremental_configs=entries)
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=30)
