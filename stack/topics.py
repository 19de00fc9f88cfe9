"""The outbox topic, created up front so partitions and retention are ours, not defaults."""

from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from confluent_kafka.cimpl import NewTopic

from onceflow.settings import RetentionSettings, Settings

PARTITIONS = 3


def topic_configs(retention: RetentionSettings) -> dict[str, str]:
    """What the project sets on its topics: retention, and segments short enough that a record
    never outlives retention by more than one segment (RetentionSettings.record_lifetime)."""
    return {
        "retention.ms": str(retention.topic_retention_ms),
        "segment.ms": str(retention.topic_segment_ms),
    }


def ensure_outbox_topic(settings: Settings, retention: RetentionSettings) -> None:
    """Create the order-event topic, or bring an existing one's configs in line (idempotent)."""
    admin = AdminClient({"bootstrap.servers": settings.kafka_bootstrap})
    configs = topic_configs(retention)
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
