"""A partition's low and high watermarks, asked of its leader until it answers. A leader that
moved since the client last read the cluster's metadata (a broker restarted, or Kafka moved
leadership back to the preferred replica) refuses the question once: librdkafka reports it
instead of asking the new leader, so the client reads the metadata again and asks again."""

import time

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

# The answers that mean "ask again, elsewhere": the leader moved or is being elected.
MOVED = frozenset(
    {
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.FENCED_LEADER_EPOCH,
        KafkaError.UNKNOWN_LEADER_EPOCH,
        KafkaError._TRANSPORT,
    }
)
_PAUSE_S = 0.2


def watermarks(
    consumer: Consumer, topic: str, partition: int, *, timeout: float
) -> tuple[int, int]:
    """(low, high) of the partition, from its current leader; raises KafkaException on any
    other error, or when the leader still refuses after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        left = max(deadline - time.monotonic(), 0.1)
        try:
            low, high = consumer.get_watermark_offsets(
                TopicPartition(topic, partition), timeout=left, cached=False
            )
            return low, high
        except KafkaException as exc:
            if exc.args[0].code() not in MOVED or time.monotonic() + _PAUSE_S >= deadline:
                raise
        time.sleep(_PAUSE_S)
        consumer.list_topics(topic, timeout=max(deadline - time.monotonic(), 0.1))
