"""Conflicting duplicates: a copy of a notified event id with other content is a dead letter
(contract section 4c), the same content re-serialised is a duplicate, an unknown content claims
nothing; a notification the output topic refuses becomes its record's dead letter."""

import json
import sqlite3
from pathlib import Path

import pytest

from onceflow.event_definition import REUSED_ID
from services.notifications.batch import plan
from services.notifications.fingerprint import fingerprint
from services.notifications.restore import changelog_content
from services.notifications.seen import SeenIds, epoch_of
from services.notifications.transform import Notification, Record, route
from tests.oracle.events import MAX, event, record


def as_record(value: bytes, e: dict[str, object], partition: int, offset: int) -> Record:
    key, _value, _t, _p, _o, headers = record(e)
    return Record(key, value, headers, partition, offset)


def written(e: dict[str, object], *, sort_keys: bool = False, indent: int | None = None) -> bytes:
    return json.dumps(e, sort_keys=sort_keys, indent=indent).encode()


def content_fingerprint(value: bytes) -> str:
    return fingerprint(value).hex()


def error_of(headers: list[tuple[str, str | bytes | None]]) -> str | bytes | None:
    return dict(headers)["error"]


def test_a_notification_carries_its_contents_fingerprint() -> None:
    e = event()
    out = route(as_record(written(e), e, 0, 0), MAX)
    assert isinstance(out, Notification)
    assert out.content == content_fingerprint(written(e))


def test_copies_with_other_content_are_dead_letters_and_the_first_stays(tmp_path: Path) -> None:
    seen = SeenIds(tmp_path / "seen.sqlite")
    counted, fresh, unknown = event(), event(), event()
    changed = {**counted, "occurred_at": "2026-11-23T00:00:00Z"}
    seen.remember(
        [
            (counted["event_id"], 0, content_fingerprint(written(counted))),
            (unknown["event_id"], 0, None),  # remembered before fingerprints
        ],
        {0: 3},
    )
    fresh_changed = {**fresh, "order": {**fresh["order"], "customer_id": "c-43"}}
    records = [
        as_record(written(changed), changed, 0, 10),  # counted earlier, other content
        as_record(written(counted, sort_keys=True), counted, 0, 11),  # same content
        as_record(written(fresh), fresh, 0, 12),
        as_record(written(fresh_changed), fresh_changed, 0, 13),  # in-batch, other content
        as_record(written(fresh, indent=1), fresh, 0, 14),  # in-batch, same content
        as_record(written({**unknown, "occurred_at": "2026-11-23T00:00:00Z"}), unknown, 0, 15),
    ]
    batch = plan(records, seen, MAX, late_before=0)
    assert [n.event.event_id for n in batch.notifications] == [fresh["event_id"]]
    assert (batch.conflicts, batch.duplicates) == (2, 3)
    assert [(error_of(d.headers), d.value) for d in batch.dead_letters] == [
        (REUSED_ID.encode(), records[0].value),
        (REUSED_ID.encode(), records[3].value),
    ]
    assert [r[2] for r in batch.remembered] == [content_fingerprint(written(fresh))]
    assert [c[2] for c in batch.changelog] == [content_fingerprint(written(fresh))]


def test_a_refused_notification_becomes_its_records_dead_letter(tmp_path: Path) -> None:
    seen = SeenIds(tmp_path / "seen.sqlite")
    kept, refused = event(), event()
    records = [as_record(written(e), e, 1, i) for i, e in enumerate((kept, refused))]
    batch = plan(records, seen, MAX, late_before=0).refusing({(1, 1): "too large"})
    assert [n.event.event_id for n in batch.notifications] == [kept["event_id"]]
    assert [s.offset for s in batch.sources] == [0]
    assert [i for i, _t, _c in batch.changelog] == [kept["event_id"]]
    assert [i for i, _t, _c in batch.remembered] == [kept["event_id"]]
    (dead,) = batch.dead_letters
    assert (dead.value, error_of(dead.headers)) == (records[1].value, b"too large")
    assert batch.positions == {1: 2}


@pytest.mark.parametrize("fingerprints", [False, True])
def test_an_older_per_partition_cache_keeps_its_ids_and_restore_points(
    tmp_path: Path, fingerprints: bool
) -> None:
    path = tmp_path / "seen.sqlite"
    old = sqlite3.connect(path)
    column, unknown, g = (", content TEXT", ", NULL", ", 'g'") if fingerprints else ("", "", "")
    old.executescript(
        "CREATE TABLE seen (partition INTEGER NOT NULL, event_id TEXT NOT NULL,"
        f" occurred INTEGER NOT NULL{column}, PRIMARY KEY (partition, event_id)) WITHOUT ROWID;"
        "CREATE TABLE restored (partition INTEGER PRIMARY KEY, next_offset INTEGER NOT NULL);"
        f"INSERT INTO seen VALUES (0, 'a', 1{unknown});"
        f"INSERT INTO seen VALUES (2, 'c', 1{g});"
        "INSERT INTO restored VALUES (0, 4);"
    )
    old.close()
    seen = SeenIds(path)
    seen.remember([("b", epoch_of("2026-11-22T00:00:00Z"), "f")], {})
    c = "g" if fingerprints else None
    assert seen.known(["a", "b", "c"]) == {"a": None, "b": "f", "c": c}
    assert seen.next_offset(0) == 4


def test_a_changelog_record_without_the_header_has_unknown_content() -> None:
    assert changelog_content(None) is None
    assert changelog_content([("other", b"x")]) is None
    assert changelog_content([("content", b"abc")]) == "abc"
