"""Bring the local cache of notified ids up to the changelog before a partition is processed."""

import logging
import time

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    IsolationLevel,
    KafkaError,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, OffsetSpec

from services.notifications.seen import Entry, SeenIds, epoch_of

log = logging.getLogger("onceflow.notifications")
_CHUNK = 10_000
Headers = dict[str, str | bytes | None] | list[tuple[str, str | bytes | None]] | None
# The changelog record's header holding its event's content fingerprint (value: occurred_at).
CONTENT_HEADER = "content"


def wait_settled(admin: AdminClient, topic: str, partitions: list[int], timeout: float) -> None:
    """Wait until no transaction is undecided on these changelog partitions (last stable
    offset = high watermark). The previous owner's offsets may be committed before its marker
    reaches the changelog; restoring before that would stop short of its last ids."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if _stable_end(admin, topic, partitions) == _end(admin, topic, partitions):
                return
        except KafkaException as exc:  # a leader moving after a broker restart: ask again
            log.info("changelog offsets not available yet: %s", exc)
        if time.monotonic() > deadline:
            raise RuntimeError(f"{topic}: a transaction stayed undecided for {timeout:.0f} s")
        time.sleep(0.2)


def _offsets(
    admin: AdminClient, topic: str, partitions: list[int], level: IsolationLevel
) -> dict[int, int]:
    latest = OffsetSpec.latest()  # type: ignore[no-untyped-call]
    request = {TopicPartition(topic, p): latest for p in partitions}
    answers = admin.list_offsets(request, isolation_level=level, request_timeout=30)
    return {tp.partition: future.result().offset for tp, future in answers.items()}


def _stable_end(admin: AdminClient, topic: str, partitions: list[int]) -> dict[int, int]:
    return _offsets(admin, topic, partitions, IsolationLevel.READ_COMMITTED)


def _end(admin: AdminClient, topic: str, partitions: list[int]) -> dict[int, int]:
    return _offsets(admin, topic, partitions, IsolationLevel.READ_UNCOMMITTED)


def restore(reader: Consumer, seen: SeenIds, topic: str, partitions: list[int]) -> int:
    """Read each changelog partition from the cache's restore point to its last stable offset
    into `seen`; return how many ids were read."""
    if not partitions:
        return 0
    starts = [TopicPartition(topic, p, seen.next_offset(p) or OFFSET_BEGINNING) for p in partitions]
    reader.assign(starts)
    pending, total = set(partitions), 0
    entries: list[Entry] = []
    ends: dict[int, int] = {}
    try:
        while pending:
            for message in reader.consume(1000, timeout=1.0):
                error = message.error()
                if error is not None and error.code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(error)
                partition, offset = message.partition(), message.offset()
                assert partition is not None
                assert offset is not None
                if error is not None:
                    pending.discard(partition)
                    continue
                key, value = message.key(), message.value()
                if key is not None and value is not None:
                    content = changelog_content(message.headers())
                    entries.append((partition, key.decode(), epoch_of(value.decode()), content))
                ends[partition] = offset + 1
                if len(entries) >= _CHUNK:
                    total += _flush(seen, entries, ends)
        total += _flush(seen, entries, ends)
    finally:
        reader.unassign()
    log.info("restored notified ids", extra={"partitions": partitions, "ids": total})
    return total


def changelog_content(headers: Headers) -> str | None:
    """The content fingerprint a changelog record carries (None: written before fingerprints)."""
    items = headers.items() if isinstance(headers, dict) else headers or []
    for name, value in items:
        if name == CONTENT_HEADER and value is not None:
            return value.decode() if isinstance(value, bytes) else value
    return None


def _flush(seen: SeenIds, entries: list[Entry], ends: dict[int, int]) -> int:
    count = len(entries)
    seen.remember(entries, ends)
    entries.clear()
    return count
