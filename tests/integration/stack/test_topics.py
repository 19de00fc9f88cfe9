"""The outbox topic gets the project's retention, when created and when it already exists."""

import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from onceflow.settings import RetentionSettings, Settings, get_settings
from stack import topics

pytestmark = pytest.mark.integration


@pytest.fixture
def scratch() -> Iterator[Settings]:
    settings = get_settings().model_copy(update={"topic": f"test-topic-{uuid.uuid4().hex[:8]}"})
    yield settings
    admin = AdminClient({"bootstrap.servers": settings.kafka_bootstrap})
    if settings.topic in admin.list_topics(timeout=30).topics:
        for future in admin.delete_topics([settings.topic]).values():
            future.result(timeout=30)


def _ensure(settings: Settings, retention_ms: int) -> None:
    retention = RetentionSettings(
        topic_retention_ms=retention_ms, dedup_window=timedelta(milliseconds=retention_ms, hours=2)
    )
    topics.ensure_outbox_topic(settings, retention)


def _retention(settings: Settings) -> str:
    admin = AdminClient({"bootstrap.servers": settings.kafka_bootstrap})
    resource = ConfigResource(ResourceType.TOPIC, settings.topic)
    configs = admin.describe_configs([resource])[resource].result(timeout=30)
    return str(configs["retention.ms"].value)


def test_a_new_topic_gets_the_configured_retention(scratch: Settings) -> None:
    _ensure(scratch, 3_600_000)
    assert _retention(scratch) == "3600000"


def test_an_existing_topic_is_brought_to_the_configured_retention(scratch: Settings) -> None:
    _ensure(scratch, 3_600_000)
    _ensure(scratch, 7_200_000)
    assert _retention(scratch) == "7200000"
