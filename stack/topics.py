"""The pipeline's topics, created up front so partitions and retention are ours, not defaults."""

from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from confluent_kafka.cimpl import NewTopic

from onceflow.settings import NotificationSettings, RetentionSettings, Settings
from onceflow.settings.kafka_auth import client_config

# Every topic has as many partitions as the outbox: the notifications changelog must (its
# partition p remembers the ids of input partition p).
PARTITIONS = 3


@dataclass(frozen=True)
class Topic:
    """A topic of the pipeline and the configs the project sets on it."""

    name: str
    configs: dict[str, str]


def topic_configs(retention: RetentionSettings) -> dict[str, str]:
    """What the project sets on its topics: retention, and segments short enough that a record
    never outlives retention by more than one segment (RetentionSettings.record_lifetime)."""
    return {
        "retention.ms": str(retention.topic_retention_ms),
        "segment.ms": str(retention.topic_segment_ms),
    }


def pipeline_topics(
    settings: Settings, notify: NotificationSettings, retention: RetentionSettings
) -> list[Topic]:
    """The outbox, the notifications and their dead letters, and the notified-ids changelog
    (kept for the de-duplication window, like every other remembered id)."""
    window_ms = int(retention.dedup_window.total_seconds() * 1000)
    changelog = {
        "cleanup.policy": "compact,delete",
        "retention.ms": str(window_ms),
        "segment.ms": str(min(retention.topic_segment_ms, window_ms)),
    }
    configs = topic_configs(retention)
    return [
        Topic(settings.topic, configs),
        Topic(notify.notify_topic, configs),
        Topic(
            notify.notify_dlq_topic,
            {**configs, "max.message.bytes": str(notify.notify_dead_letter_max_bytes)},
        ),
        Topic(notify.notify_changelog_topic, changelog),
    ]


def ensure_topics(bootstrap: str, wanted: list[Topic], principal: str = "broker") -> None:
    """Create the missing topics; bring existing ones' configs in line (idempotent). `make up`
    runs it as the broker principal; the tests, as theirs."""
    admin = AdminClient(client_config(bootstrap, principal))
    existing = set(admin.list_topics(timeout=30).topics)
    # -1: the broker's default replication (1 locally, 3 in the cluster topology).
    new = [NewTopic(t.name, PARTITIONS, replication_factor=-1, config=t.configs) for t in wanted]
    missing = [topic for topic in new if topic.topic not in existing]
    for name, future in (admin.create_topics(missing) if missing else {}).items():
        try:
            future.result(timeout=30)
        except KafkaException as exc:
            # Metadata lags creation: a topic made a moment ago may not be listed yet.
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
            existing.add(name)
    resources = [
        ConfigResource(
            ResourceType.TOPIC,
            t.name,
            incremental_configs=[
                ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
                for name, value in t.configs.items()
            ],
        )
        for t in wanted
        if t.name in existing
    ]
    for future in admin.incremental_alter_configs(resources).values() if resources else []:
        future.result(timeout=30)
