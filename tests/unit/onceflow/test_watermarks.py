"""The watermarks of a partition whose leader moved: asked again after the metadata is read."""

from typing import Any, cast

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from onceflow.watermarks import watermarks


class _Cluster:
    """A consumer's two calls: answers `refusals` in turn, then (low, high)."""

    def __init__(self, *refusals: int) -> None:
        self.refusals = list(refusals)
        self.asked: list[TopicPartition] = []
        self.metadata_reads = 0

    def get_watermark_offsets(self, tp: TopicPartition, **_: Any) -> tuple[int, int]:
        self.asked.append(tp)
        if self.refusals:
            raise KafkaException(KafkaError(self.refusals.pop(0)))
        return 3, 17

    def list_topics(self, topic: str, **_: Any) -> None:
        self.metadata_reads += 1


def _ask(cluster: _Cluster, timeout: float = 10) -> tuple[int, int]:
    return watermarks(cast(Consumer, cluster), "orders", 2, timeout=timeout)


def test_a_moved_leader_is_asked_again_after_a_metadata_read() -> None:
    cluster = _Cluster(KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE)
    assert _ask(cluster) == (3, 17)
    assert [(tp.topic, tp.partition) for tp in cluster.asked] == [("orders", 2)] * 3
    assert cluster.metadata_reads == 2


def test_any_other_error_is_raised_at_once() -> None:
    cluster = _Cluster(KafkaError.TOPIC_AUTHORIZATION_FAILED)
    with pytest.raises(KafkaException) as raised:
        _ask(cluster)
    assert raised.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert len(cluster.asked) == 1


def test_a_leader_that_keeps_refusing_is_raised_after_the_timeout() -> None:
    cluster = _Cluster(*[KafkaError.NOT_LEADER_FOR_PARTITION] * 100)
    with pytest.raises(KafkaException) as raised:
        _ask(cluster, timeout=0.5)
    assert raised.value.args[0].code() == KafkaError.NOT_LEADER_FOR_PARTITION
    assert 1 < len(cluster.asked) < 100
