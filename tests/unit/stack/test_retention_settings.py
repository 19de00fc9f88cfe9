"""The de-duplication window must outlive every record on the topic, or the setting is refused."""

from datetime import timedelta

import pytest
from pydantic import ValidationError

from onceflow.settings import RetentionSettings
from stack.topics import topic_configs


def test_the_defaults_keep_ids_longer_than_records_live() -> None:
    retention = RetentionSettings()
    assert retention.dedup_window == timedelta(days=8)
    assert retention.topic_retention == timedelta(days=7)
    assert retention.dedup_window >= retention.record_lifetime


def test_a_window_shorter_than_retention_plus_a_segment_is_refused_in_one_sentence() -> None:
    with pytest.raises(ValidationError) as refused:
        RetentionSettings(dedup_window=timedelta(days=7))
    message = refused.value.errors()[0]["msg"]
    assert "could be counted twice" in message
    assert "\n" not in message


def test_windows_of_minutes_are_allowed_when_retention_is_shorter() -> None:
    retention = RetentionSettings(
        topic_retention_ms=60_000, topic_segment_ms=10_000, dedup_window=timedelta(minutes=7)
    )
    assert topic_configs(retention) == {"retention.ms": "60000", "segment.ms": "10000"}


def test_maintenance_runs_at_least_every_15_minutes() -> None:
    with pytest.raises(ValidationError):
        RetentionSettings(maintenance_interval=timedelta(minutes=16))


def test_keys_are_kept_a_day_unless_a_benchmark_asks_for_less() -> None:
    with pytest.raises(ValidationError):
        RetentionSettings(api_idempotency_retention_hours=1)
    short = RetentionSettings(api_idempotency_retention_hours=0.1, allow_short_windows=True)
    assert short.idempotency_retention == timedelta(minutes=6)
