"""Reading the order-event topic as contract consumers do: read_committed, from the beginning."""

import json
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

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
            if message.error():
                # The topic may not exist until the connector writes its first record.
                if message.error().code() in (
                    KafkaError._PARTITION_EOF,
                    KafkaError.UNKNOWN_TOPIC_OR_PART,
                ):
                    continue
                raise RuntimeError(message.error())
            key = (message.key() or b"").decode()
            if key not in wanted:
                continue
            headers = {name: raw.decode() for name, raw in (message.headers() or [])}
            found.append(
                Event(
                    key, headers, json.loads(message.value()), message.partition(), message.offset()
                )
            )
    finally:
        consumer.close()
    return found
