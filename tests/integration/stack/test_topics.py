"""The outbox topic gets the project's retention, when created and when it already exists."""

import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from onceflow.settings import NotificationSettings, RetentionSettings, Settings, get_settings
from onceflow.settings.kafka_auth import client_config
from stack import topics
from stack.waiting import wait_for

pytestmark = pytest.mark.integration


@pytest.fixture
def scratch() -> Iterator[Settings]:
    settings = get_settings().model_copy(update={"topic": f"test-topic-{uuid.uuid4().hex[:8]}"})
    yield settings
    admin = AdminClient(client_config(settings.kafka_bootstrap, "tests"))
    if settings.topic in admin.list_topics(timeout=30).topics:
        for future in admin.delete_topics([settings.topic]).values():
            future.result(timeout=30)


def _ensure(settings: Settings, retention_ms: int) -> None:
    retention = RetentionSettings(
        topic_retention_ms=retention_ms, dedup_window=timedelta(milliseconds=retention_ms, hours=2)
    )
    topics.ensure_topics(
        settings.kafka_bootstrap, [topics.Topic(settings.topic, topics.topic_configs(retention))]
    )


def _retention(settings: Settings) -> str:
    admin = AdminClient(client_config(settings.kafka_bootstrap, "tests"))
    resource = ConfigResource(ResourceType.TOPIC, settings.topic)
    configs = admin.describe_configs([resource])[resource].result(timeout=30)
    return str(configs["retention.ms"].value)


def test_a_new_topic_gets_the_configured_retention(scratch: Settings) -> None:
    _ensure(scratch, 3_600_000)
    assert _retention(scratch) == "3600000"


def test_an_existing_topic_is_brought_to_the_configured_retention(scratch: Settings) -> None:
    _ensure(scratch, 3_600_000)
    _ensure(scratch, 7_200_000)
    # Brokers apply a config change asynchronously.
    wait_for(lambda: _retention(scratch) == "7200000", what="the new retention", timeout=30)


def test_the_pipeline_topics_have_their_partitions_and_policies(scratch: Settings) -> None:
    prefix = scratch.topic
    notify = NotificationSettings(
        notify_topic=f"{prefix}-n",
        notify_dlq_topic=f"{prefix}-d",
        notify_changelog_topic=f"{prefix}-c",
    )
    retention = RetentionSettings(
        topic_retention_ms=3_600_000, dedup_window=timedelta(hours=3), allow_short_windows=True
    )
    wanted = topics.pipeline_topics(scratch, notify, retention)
    names = [t.name for t in wanted]
    try:
        topics.ensure_topics(scratch.kafka_bootstrap, wanted)
        topics.ensure_topics(scratch.kafka_bootstrap, wanted)  # idempotent
        admin = AdminClient(client_config(scratch.kafka_bootstrap, "tests"))
        metadata = admin.list_topics(timeout=30).topics
        assert {name: len(metadata[name].partitions) for name in names} == dict.fromkeys(names, 3)
        resource = ConfigResource(ResourceType.TOPIC, notify.notify_changelog_topic)
        configs = admin.describe_configs([resource])[resource].result(timeout=30)
        assert configs["cleanup.policy"].value == "compact,delete"
        assert configs["retention.ms"].value == str(3 * 3_600_000)
        assert _retention(scratch) == "3600000"
    finally:
        admin = AdminClient(client_config(scratch.kafka_bootstrap, "tests"))
        for future in admin.delete_topics(names[1:]).values():
            future.result(timeout=30)
