"""Reading the order-event topic as contract consumers do: read_committed, from the beginning."""

import json
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from confluent_kafka import Consumer, KafkaError


@dataclass(frozen=True)
class Event:
    key: str
    headers: dict[str, str]
    value: dict[str, Any]
    partition: int
    offset: int


def read_events(
    bootstrap: str, topic: str, *, keys: Iterable[str], expected: int, timeout: float
) -> list[Event]:
    """Read `topic` from the start until `expected` events with these keys arrived, or time out."""
    wanted = set(keys)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"e2e-{uuid.uuid4()}",
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    found: list[Event] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                if len(found) >= expected:
                    break
                continue
            error = message.error()
            if error is not None:
                # The topic may not exist until the connector writes its first record.
                if error.code() in (KafkaError._PARTITION_EOF, KafkaError.UNKNOWN_TOPIC_OR_PART):
                    continue
                raise RuntimeError(error)
            key = _text(message.key())
            if key not in wanted:
                continue
            pairs = cast(list[tuple[str, bytes | None]], message.headers() or [])
            headers = {name: _text(raw) for name, raw in pairs}
            partition, offset = message.partition(), message.offset()
            assert partition is not None
            assert offset is not None
            found.append(Event(key, headers, json.loads(_text(message.value())), partition, offset))
    finally:
        consumer.close()
    return found


def _text(raw: str | bytes | None) -> str:
    return raw.decode() if isinstance(raw, bytes) else (raw or "")
