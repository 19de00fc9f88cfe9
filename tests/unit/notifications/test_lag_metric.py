"""An instance stops reporting the lag of partitions it no longer reads (their new owner reports
it): a kept value would be a stale lag that the NotificationsLagHigh alert adds up."""

from types import SimpleNamespace
from typing import Any

from confluent_kafka import TopicPartition
from prometheus_client import REGISTRY

from services.notifications import metrics
from services.notifications.processor import Processor


def _reported() -> set[str]:
    return {
        sample.labels["partition"]
        for family in REGISTRY.collect()
        if family.name == "onceflow_notifications_lag_records"
        for sample in family.samples
    }


def test_revoked_and_lost_partitions_stop_reporting_lag() -> None:
    for partition in ("0", "1", "2"):
        metrics.LAG.labels(partition).set(100)
    instance: Any = SimpleNamespace(_owned={0, 1, 2})
    instance._disown = lambda partitions: Processor._disown(instance, partitions)
    instance._settle = lambda **_: None  # no transaction in flight
    Processor._revoked(instance, None, [TopicPartition("t", 0)])  # type: ignore[arg-type]
    Processor._lost(instance, None, [TopicPartition("t", 2)])  # type: ignore[arg-type]
    assert instance._owned == {1}
    assert _reported() == {"1"}
