"""The notifications stage's dead letters: records of its dead-letter topic (contract 4b), read
as the processor's readers read (read_committed: an aborted transaction's dead letters were
never written). Only read: the consumer is assigned partitions and never joins a group or
commits, so any principal that may read the topic will do."""

import time
from datetime import UTC, datetime
from typing import NoReturn, cast

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from onceflow.settings import NotificationSettings, Settings
from onceflow.settings.kafka_auth import client_config
from onceflow.watermarks import watermarks
from services.ops.dead_letters import DeadLetter, DeadLetterError, Position, Stage

# How many of a partition's newest dead letters `list` reads at most.
NEWEST = 10_000


def _consumer(settings: Settings) -> Consumer:
    return Consumer(
        {
            **client_config(settings.kafka_bootstrap, "ops"),
            "group.id": "onceflow-ops-dead-letters",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            # An unreachable broker is said once, by the exception, not logged per retry.
            "log_level": 2,
        }
    )


def _header(headers: list[tuple[str, bytes | None]], name: str) -> str:
    for key, value in headers:
        if key == name and value is not None:
            return value.decode("utf-8", errors="replace")
    return ""


def _letter(message: Message) -> DeadLetter:
    pairs = cast(list[tuple[str, str | bytes | None]], message.headers() or [])
    headers = [(name, v.encode() if isinstance(v, str) else v) for name, v in pairs]
    _kind, millis = message.timestamp()
    return DeadLetter(
        stage=Stage.NOTIFICATIONS,
        topic=str(message.topic()),
        partition=int(message.partition() or 0),
        offset=int(message.offset() or 0),
        key=message.key(),
        value=message.value(),
        error=_header(headers, "error") or "(no error header)",
        at=datetime.fromtimestamp(max(millis, 0) / 1000, UTC),
        headers=headers,
    )


def _partitions(consumer: Consumer, topic: str, timeout: float) -> list[int]:
    """The topic's partitions; none when it does not exist (nothing was dead-lettered yet)."""
    metadata = consumer.list_topics(topic, timeout=timeout).topics.get(topic)
    if metadata is None or metadata.error is not None:
        code = None if metadata is None else metadata.error.code()
        if code in (None, KafkaError.UNKNOWN_TOPIC_OR_PART):
            return []
        raise KafkaException(metadata.error)
    return sorted(metadata.partitions)


def _read(consumer: Consumer, starts: list[TopicPartition], timeout: float) -> list[Message]:
    """Every committed record from `starts` to each partition's end (its last stable offset)."""
    consumer.assign(starts)
    open_ = {tp.partition for tp in starts}
    found: list[Message] = []
    deadline = time.monotonic() + timeout
    while open_:
        if time.monotonic() > deadline:
            raise KafkaException(
                KafkaError(KafkaError._TIMED_OUT, "the dead-letter topic was not read to its end")
            )
        message = consumer.poll(0.5)
        if message is None:
            continue
        error = message.error()
        if error is None:
            found.append(message)
        elif error.code() == KafkaError._PARTITION_EOF:
            open_.discard(int(message.partition() or 0))
        else:
            raise KafkaException(error)
    return found


def listing(
    *, settings: Settings, notify: NotificationSettings, timeout: float = 15.0
) -> list[DeadLetter]:
    """Up to NEWEST of each partition's newest dead letters (raw bytes included)."""
    topic = notify.notify_dlq_topic
    consumer = _consumer(settings)
    try:
        starts = []
        for partition in _partitions(consumer, topic, timeout):
            low, high = watermarks(consumer, topic, partition, timeout=timeout)
            if high > low:
                starts.append(TopicPartition(topic, partition, max(low, high - NEWEST)))
        return [_letter(m) for m in _read(consumer, starts, timeout)] if starts else []
    finally:
        consumer.close()


def find(
    *, settings: Settings, notify: NotificationSettings, position: Position, timeout: float = 15.0
) -> DeadLetter | None:
    """The dead letter at `position` of the dead-letter topic, or None."""
    topic = notify.notify_dlq_topic
    consumer = _consumer(settings)
    try:
        if position.partition not in _partitions(consumer, topic, timeout):
            return None
        low, high = watermarks(consumer, topic, position.partition, timeout=timeout)
        if not low <= position.offset < high:
            return None
        consumer.assign([TopicPartition(topic, position.partition, position.offset)])
        message = _first(consumer, timeout)
        # Past it: the offset held an aborted record or a transaction marker, no dead letter.
        return None if message is None or message.offset() != position.offset else _letter(message)
    finally:
        consumer.close()


def _first(consumer: Consumer, timeout: float) -> Message | None:
    """The first committed record of the assigned partition, or None at its end."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        error = message.error()
        if error is None:
            return message
        if error.code() == KafkaError._PARTITION_EOF:
            return None
        raise KafkaException(error)
    raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "the dead-letter topic did not answer"))


def refuse_replay(letter: DeadLetter, *, topic: str) -> NoReturn:
    """Notifications dead letters are not replayed by ops (docs/operations.md says why): say
    what to do instead, naming the aggregation dead letter of the same input record."""
    partition = _header(letter.headers, "sourcePartition")
    offset = _header(letter.headers, "sourceOffset")
    twin = f"aggregation:{topic}:{partition}:{offset}" if partition and offset else None
    instead = f"replay {twin} to count it in analytics" if twin else "fix what produced it"
    raise DeadLetterError(
        f"{letter.id} was not replayed: onceflow-ops cannot replay notifications dead letters, "
        "because only the processor may write the notification topics and only Connect the "
        f"order topic; {instead}, and tell the customer as docs/operations.md#dead-letters says"
    )
