"""Reading a topic as contract consumers do (read_committed, from the beginning), to its end.

"The end" is the partitions' high watermarks taken once the expected records have arrived,
and a partition is read only when the consumer's position reached its watermark: a duplicate
at the tail, or one behind a transaction still open when the watermark was taken, is read too
(the position passes an open transaction only once it committed or aborted).
"""

import json
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    TopicPartition,
)

from onceflow.settings.kafka_auth import client_config
from onceflow.watermarks import watermarks

_WAIT = 30.0  # one metadata or offsets request


@dataclass(frozen=True)
class Event:
    key: str
    headers: dict[str, str]
    value: dict[str, Any]
    partition: int
    offset: int


@dataclass(frozen=True)
class Record:
    """One committed record, raw."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]


class TopicReader:
    """A read_committed reader of whole topics, in a group of its own, that knows their end."""

    def __init__(self, bootstrap: str, topics: list[str]) -> None:
        self.topics = topics
        common = {**client_config(bootstrap, "tests"), "group.id": f"reader-{uuid.uuid4()}"}
        self._consumer = Consumer(
            {
                **common,
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
            }
        )
        # The high watermark, not the last stable offset: reading up to it waits out open
        # transactions.
        self._ends = Consumer({**common, "isolation.level": "read_uncommitted"})
        self._next: dict[tuple[str, int], int] = {}

    def close(self) -> None:
        self._consumer.close()
        self._ends.close()

    def high_watermarks(self) -> dict[tuple[str, int], int]:
        """Every partition of the topics and its high watermark, now."""
        ends = {}
        for topic in self.topics:
            meta = self._ends.list_topics(topic, timeout=_WAIT).topics[topic]
            for partition in meta.partitions or {}:
                _low, ends[(topic, partition)] = watermarks(
                    self._ends, topic, partition, timeout=_WAIT
                )
        return ends

    def read_to(self, ends: dict[tuple[str, int], int], deadline: float) -> list[Record]:
        """Every committed record from where the last read stopped up to `ends`."""
        new = [tp for tp in ends if tp not in self._next]
        if new:
            for tp in new:
                self._next[tp] = 0
            self._consumer.incremental_assign(
                [TopicPartition(t, p, OFFSET_BEGINNING) for t, p in new]
            )
        records: list[Record] = []
        while any(self._next[tp] < end for tp, end in ends.items()):
            if time.monotonic() >= deadline:
                behind = {tp: (self._next[tp], end) for tp, end in ends.items()}
                raise AssertionError(f"topic not read to its end in time: (next, end) {behind}")
            message = self._consumer.poll(0.5)
            if message is not None:
                self._take(message, records)
        return records

    def _take(self, message: Message, records: list[Record]) -> None:
        topic, partition, offset = message.topic(), message.partition(), message.offset()
        assert topic is not None
        assert partition is not None
        assert offset is not None
        error = message.error()
        if error is not None:
            if error.code() != KafkaError._PARTITION_EOF:
                raise RuntimeError(error.str())
            self._next[(topic, partition)] = max(self._next[(topic, partition)], offset)
            return
        self._next[(topic, partition)] = offset + 1
        headers = cast(list[tuple[str, bytes | None]], message.headers() or [])
        records.append(
            Record(topic, partition, offset, message.key(), message.value(), list(headers))
        )


def read_until(
    bootstrap: str, topics: list[str], *, enough: Callable[[list[Record]], bool], timeout: float
) -> list[Record]:
    """Read `topics` until `enough` holds for what was read, then on to the high watermarks of
    that moment: the whole committed content, tail included. AssertionError on timeout."""
    deadline = time.monotonic() + timeout
    reader = TopicReader(bootstrap, topics)
    records: list[Record] = []
    try:
        while True:
            records += reader.read_to(_existing(reader, deadline), deadline)
            if enough(records):
                break
            if time.monotonic() >= deadline:
                raise AssertionError(f"only {len(records)} records on {topics} after {timeout}s")
            time.sleep(0.2)
        records += reader.read_to(reader.high_watermarks(), deadline)
    finally:
        reader.close()
    return records


def _existing(reader: TopicReader, deadline: float) -> dict[tuple[str, int], int]:
    """The high watermarks; none while a topic does not exist yet (the connector creates it)."""
    try:
        return reader.high_watermarks()
    except KafkaException:  # a broker restarting (the crash tests)
        if time.monotonic() >= deadline:
            raise
        return {}


def read_events(
    bootstrap: str, topic: str, *, keys: Iterable[str], expected: int, timeout: float
) -> list[Event]:
    """Every committed event on `topic` with one of these keys, read to the end once at least
    `expected` of them arrived (more means duplicates, which the caller sees)."""
    wanted = {key.encode() for key in keys}

    def events(records: list[Record]) -> list[Record]:
        return [r for r in records if r.key in wanted]

    records = read_until(
        bootstrap, [topic], enough=lambda rs: len(events(rs)) >= expected, timeout=timeout
    )
    return [
        Event(
            _text(r.key),
            {name: _text(raw) for name, raw in r.headers},
            json.loads(_text(r.value)),
            r.partition,
            r.offset,
        )
        for r in events(records)
    ]


def _text(raw: str | bytes | None) -> str:
    return raw.decode() if isinstance(raw, bytes) else (raw or "")
