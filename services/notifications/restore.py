"""Bring the local cache of notified ids up to the whole changelog: every partition, since an
id notified from any input partition is a duplicate on all of them."""

import logging
import time
from typing import cast

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Message,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, OffsetSpec

from services.notifications.seen import Entry, SeenIds, epoch_of

log = logging.getLogger("onceflow.notifications")
_CHUNK = 10_000
Headers = dict[str, str | bytes | None] | list[tuple[str, str | bytes | None]] | None
# The changelog record's header holding its event's content fingerprint (value: occurred_at).
CONTENT_HEADER = "content"
# What a reader reports while a broker is away: it reconnects and goes on by itself.
_PASSING = frozenset({KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._RESOLVE})
# Written by versions before 2026-11-26 (a random token per process); read by none now: a
# process passes over its own records by their keys (restore's `mine`).
WRITER_HEADER = "writer"
# More own ids than this waiting to be read back (never expected): forget them, read them.
_MINE_MAX = 1_000_000


def changelog_partitions(admin: AdminClient, topic: str) -> list[int]:
    """The changelog's partitions."""
    metadata = admin.list_topics(topic, timeout=30).topics[topic]
    if metadata.error is not None:
        raise KafkaException(metadata.error)
    return sorted(metadata.partitions)


def wait_settled(admin: AdminClient, topic: str, partitions: list[int], timeout: float) -> None:
    """Wait until every transaction that wrote to these changelog partitions before now is
    decided (last stable offset >= the high watermark seen first). The previous owner's offsets
    may be committed before its marker reaches the changelog; restoring before that would stop
    short of its last ids. Transactions begun meanwhile do not hold it back."""
    deadline = time.monotonic() + timeout
    ends: dict[int, int] | None = None
    while True:
        try:
            ends = ends or _end(admin, topic, partitions)
            stable = _stable_end(admin, topic, partitions)
            if all(stable[p] >= end for p, end in ends.items()):
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


def restore(
    reader: Consumer,
    seen: SeenIds,
    topic: str,
    partitions: list[int],
    *,
    mine: set[bytes] | None = None,
) -> int:
    """Read each changelog partition from the cache's restore point to its last stable offset
    into `seen`; return how many ids were read. `mine`: the ids (keys) this process committed
    and remembered in `seen` at once, not yet read back: a record of one of them is only passed
    over (and the id leaves `mine`). Another process, a restart of this one included, reads
    them all. (A record of another writer with such an id is passed over too: its INSERT OR
    IGNORE would change nothing, the id is in the cache.)"""
    if not partitions:
        return 0
    mine = mine if mine is not None else set()
    if len(mine) > _MINE_MAX:
        mine.clear()
    starts = [TopicPartition(topic, p, seen.next_offset(p) or OFFSET_BEGINNING) for p in partitions]
    reader.assign(starts)
    pending, total = set(partitions), 0
    entries: list[Entry] = []
    ends: dict[int, int] = {}
    try:
        while pending:
            for message in _next(reader):
                key = message.key()
                if key in mine:  # the cheap path for this process's own records
                    mine.discard(key)
                    ends[cast(int, message.partition())] = cast(int, message.offset()) + 1
                    continue
                error = message.error()
                if error is not None and error.code() != KafkaError._PARTITION_EOF:
                    if error.fatal() or error.code() not in _PASSING:
                        raise KafkaException(error)
                    log.info("changelog reader: %s", error.str())  # it reconnects by itself
                    continue
                partition, offset = message.partition(), message.offset()
                assert partition is not None
                assert offset is not None
                if error is not None:
                    pending.discard(partition)
                    continue
                value, headers = message.value(), message.headers()
                if key is not None and value is not None:
                    content = changelog_content(headers)
                    entries.append((key.decode(), epoch_of(value.decode()), content))
                ends[partition] = offset + 1
                if len(entries) >= _CHUNK:
                    total += _flush(seen, entries, ends)
        total += _flush(seen, entries, ends)
    finally:
        reader.unassign()
    log.debug("restored notified ids", extra={"partitions": partitions, "ids": total})
    return total


def _next(reader: Consumer) -> list[Message]:
    """What the reader holds already, else the next message or event (as soon as it comes;
    consume() would wait out its timeout for a full batch)."""
    ready = reader.consume(_CHUNK, timeout=0)
    if ready:
        return ready
    message = reader.poll(1.0)
    return [] if message is None else [message]


def changelog_content(headers: Headers) -> str | None:
    """The content fingerprint a changelog record carries (None: written before fingerprints)."""
    return _header(headers, CONTENT_HEADER)


def _header(headers: Headers, wanted: str) -> str | None:
    items = headers.items() if isinstance(headers, dict) else headers or []
    for name, value in items:
        if name == wanted and value is not None:
            return value.decode() if isinstance(value, bytes) else value
    return None


def _flush(seen: SeenIds, entries: list[Entry], ends: dict[int, int]) -> int:
    count = len(entries)
    seen.remember(entries, ends)
    entries.clear()
    return count
