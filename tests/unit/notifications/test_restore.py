"""restore(): the changelog's records into the cache, the process's own passed over."""

from pathlib import Path
from typing import Any, cast

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException

from services.notifications.restore import CONTENT_HEADER, WRITER_HEADER, restore
from services.notifications.seen import SeenIds

OCCURRED = b"2026-11-25T10:00:00Z"
EOF = KafkaError._PARTITION_EOF


class FakeMessage:
    """A changelog record (or the end of its partition, with `eof`)."""

    def __init__(self, offset: int, key: bytes = b"", headers: Any = None, *, error: int = 0):
        self._offset, self._key, self._headers, self._error = offset, key, headers, error

    def error(self) -> KafkaError | None:
        return KafkaError(self._error) if self._error else None

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return self._offset

    def key(self) -> bytes:
        return self._key

    def value(self) -> bytes:
        return OCCURRED

    def headers(self) -> Any:
        return self._headers


class FakeReader:
    """A reader holding the given messages, all at once."""

    def __init__(self, messages: list[FakeMessage]) -> None:
        self.messages = messages

    def assign(self, _partitions: object) -> None: ...

    def unassign(self) -> None: ...

    def consume(self, _n: int, timeout: float) -> list[FakeMessage]:
        ready, self.messages = self.messages, []
        return ready

    def poll(self, _timeout: float) -> None:
        raise AssertionError("everything was consumed at once")


def test_own_records_are_passed_over_once_and_the_restore_point_moves(tmp_path: Path) -> None:
    seen = SeenIds(tmp_path / "seen.sqlite")
    messages = [
        FakeMessage(0, b"own", [(CONTENT_HEADER, b"a")]),
        FakeMessage(1, b"other", [(CONTENT_HEADER, b"b"), (WRITER_HEADER, b"them")]),
        FakeMessage(2, b"older", None),  # written before fingerprints
        FakeMessage(3, b"own", [(CONTENT_HEADER, b"c")]),  # the same id again: read
        FakeMessage(4, b"own-last", [(CONTENT_HEADER, b"d")]),  # the last record: own
        FakeMessage(5, error=EOF),
    ]
    mine = {b"own", b"own-last", b"not-yet-read-back"}
    reader = cast(Consumer, FakeReader(messages))
    assert restore(reader, seen, "changelog", [0], mine=mine) == 3
    assert seen.known(["own", "other", "older", "own-last"]) == {
        "other": "b",
        "older": None,
        "own": "c",
    }
    assert mine == {b"not-yet-read-back"}
    assert seen.next_offset(0) == 5


def test_without_own_ids_every_record_is_read(tmp_path: Path) -> None:
    seen = SeenIds(tmp_path / "seen.sqlite")
    messages = [
        FakeMessage(0, b"own", [(WRITER_HEADER, b"me")]),  # a token of an older version
        FakeMessage(1, error=EOF),
    ]
    assert restore(cast(Consumer, FakeReader(messages)), seen, "changelog", [0]) == 1
    assert seen.known(["own"]) == {"own": None}


def test_a_broker_away_is_waited_out_and_another_error_raises(tmp_path: Path) -> None:
    seen = SeenIds(tmp_path / "seen.sqlite")
    eof = FakeMessage(1, error=EOF)
    away = [FakeMessage(-1, error=KafkaError._TRANSPORT), FakeMessage(0, b"id"), eof]
    assert restore(cast(Consumer, FakeReader(away)), seen, "changelog", [0]) == 1
    gone = [FakeMessage(-1, error=KafkaError.UNKNOWN_TOPIC_OR_PART), eof]
    with pytest.raises(KafkaException):
        restore(cast(Consumer, FakeReader(gone)), seen, "changelog", [0])
