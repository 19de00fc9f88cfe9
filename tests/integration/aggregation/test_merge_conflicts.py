"""merge.py's conflicting duplicates on a freshly migrated database, without Spark: a record
whose event id was counted with another fingerprint is a dead letter with the raw bytes the
caller reads again (without them, its key is the order id), not a valid record; an id
remembered without a fingerprint (before migration 0012) claims no conflict."""

import uuid
from collections.abc import Sequence
from datetime import timedelta

import pytest

from onceflow.event_definition import REUSED_ID
from spark_jobs.aggregation import merge, unstage
from tests.integration.aggregation.staged import Row, stage_rows
from tests.integration.aggregation.test_merge import NOW, Db, db, event_row

pytestmark = pytest.mark.integration
__all__ = ["db"]  # the fixture

Raw = dict[merge.Position, tuple[bytes | None, bytes | None]]


def copy(offset: int, event_id: uuid.UUID, content: int | None, **changes: object) -> Row:
    """A staged copy of event `event_id` whose fingerprint is `content` (None: unknown)."""
    return {**event_row(offset, event_id), "fingerprint": content, **changes}


def fold(db: Db, batch_id: int, rows: list[Row], raw: Raw | None = None) -> merge.Merged:
    """Stage and merge one batch; `raw` answers the fold's raw_records (None: not given)."""
    staged = stage_rows(db.dsn, "q", batch_id, rows)

    def raw_records(positions: Sequence[merge.Position]) -> Raw:
        assert raw is not None
        return {at: raw[at] for at in positions}

    with db.cur.connection.transaction():
        merge.prepare(db.cur)
        unstage.load(db.cur, "q", batch_id, staged)
        return merge.merge(
            db.cur,
            "t",
            query_id="q",
            batch_id=batch_id,
            raw_records=None if raw is None else raw_records,
        )


def dead_letters(db: Db) -> list[tuple[int, bytes | None, bytes | None, str]]:
    db.cur.execute("SELECT kafka_offset, key, value, error FROM analytics.dead_letters")
    return sorted(db.cur.fetchall())


def test_an_id_counted_without_a_fingerprint_claims_no_conflict(db: Db) -> None:
    a = uuid.uuid4()
    fold(db, 0, [copy(0, a, None)])
    merged = fold(db, 1, [copy(1, a, 1), copy(2, a, 2, occurred_at=NOW + timedelta(hours=1))])
    assert (merged.conflicts, merged.valid_records, merged.events_new) == (0, 2, 0)
    assert dead_letters(db) == []


def test_a_copy_of_a_counted_id_with_other_content_is_a_dead_letter(db: Db) -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    fold(db, 0, [copy(0, a, 1)])
    later = NOW + timedelta(days=1)
    merged = fold(db, 1, [copy(1, a, 2, occurred_at=later), copy(2, a, 1), copy(3, b, 5)])
    assert (merged.conflicts, merged.dead_letters) == (1, 1)
    assert (merged.valid_records, merged.events_new) == (2, 1)  # the exact copy: a duplicate
    # No raw_records: the key is the order id (a valid event's key), the value unknown.
    assert dead_letters(db) == [(1, f"o-{a}".encode(), None, REUSED_ID)]
    db.cur.execute("SELECT event_id, fingerprint FROM aggregation.applied_events")
    assert sorted(db.cur.fetchall()) == sorted([(a, 1), (b, 5)])


def test_conflicts_within_a_batch_keep_the_first_copy_and_get_their_raw_bytes(db: Db) -> None:
    a = uuid.uuid4()
    raw: Raw = {(0, 1): (b"key-1", b"value-1"), (0, 3): (b"key-3", b"value-3")}
    rows = [copy(0, a, 1), copy(1, a, 2), copy(2, a, 1), copy(3, a, 3)]
    merged = fold(db, 0, rows, raw)
    assert (merged.conflicts, merged.valid_records, merged.events_new) == (2, 2, 1)
    assert dead_letters(db) == [
        (1, b"key-1", b"value-1", REUSED_ID),
        (3, b"key-3", b"value-3", REUSED_ID),
    ]
    db.cur.execute("SELECT kafka_offset, fingerprint FROM aggregation.applied_events")
    assert db.cur.fetchall() == [(0, 1)]
