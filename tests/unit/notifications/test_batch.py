"""plan(): what one transaction writes, against the local cache of notified ids."""

from pathlib import Path

from services.notifications.batch import plan
from services.notifications.seen import SeenIds, epoch_of
from services.notifications.transform import Record
from tests.oracle.events import MAX, event, record


def as_record(e: dict[str, object], partition: int, offset: int) -> Record:
    key, value, _t, _p, _o, headers = record(e)
    return Record(key, value, headers, partition, offset)


def test_a_batch_skips_known_and_repeated_ids_and_commits_past_everything(tmp_path: Path) -> None:
    seen = SeenIds(tmp_path / "seen.sqlite")
    old, new, other = event(), event(), event()
    seen.remember([(old["event_id"], epoch_of(old["occurred_at"]), None)], {0: 7})
    records = [
        as_record(old, 0, 10),
        as_record(new, 0, 11),
        as_record(new, 0, 12),  # the same event twice in one batch
        Record(b"k", b"junk", [], 0, 13),
        as_record(other, 1, 5),
    ]
    batch = plan(records, seen, MAX, late_before=0)
    assert [n.event.event_id for n in batch.notifications] == [new["event_id"], other["event_id"]]
    assert batch.duplicates == 2
    assert len(batch.dead_letters) == 1
    assert batch.positions == {0: 14, 1: 6}
    assert [i for i, _, _ in batch.remembered] == [new["event_id"], other["event_id"]]
    assert batch.late == 0


def test_events_before_the_window_are_counted_late(tmp_path: Path) -> None:
    seen = SeenIds(tmp_path / "seen.sqlite")
    e = event()
    batch = plan([as_record(e, 0, 0)], seen, MAX, late_before=epoch_of(e["occurred_at"]) + 1)
    assert (batch.late, len(batch.notifications)) == (1, 1)


def test_the_cache_forgets_before_the_window_and_keeps_its_restore_points(tmp_path: Path) -> None:
    seen = SeenIds(tmp_path / "seen.sqlite")
    seen.remember([("a", 100, None), ("b", 200, "f")], {0: 5})
    seen.remember([], {0: 3})  # a restore point never moves back
    assert seen.forget_before(150) == 1
    assert seen.known(["a", "b"]) == {"b": "f"}
    seen.close()
    again = SeenIds(tmp_path / "seen.sqlite")
    assert again.next_offset(0) == 5
    assert again.next_offset(1) is None


def test_a_copy_on_another_partition_is_a_duplicate(tmp_path: Path) -> None:
    seen = SeenIds(tmp_path / "seen.sqlite")
    notified, fresh = event(), event()
    seen.remember([(notified["event_id"], epoch_of(notified["occurred_at"]), None)], {})
    records = [
        as_record(notified, 2, 0),  # notified from partition 0 earlier
        as_record(fresh, 0, 0),
        as_record(fresh, 1, 0),  # the same event on another partition, in the same batch
    ]
    batch = plan(records, seen, MAX, late_before=0)
    assert [n.event.event_id for n in batch.notifications] == [fresh["event_id"]]
    assert batch.duplicates == 2


def test_lookups_of_more_ids_than_sqlite_binds_at_once(tmp_path: Path) -> None:
    seen = SeenIds(tmp_path / "seen.sqlite")
    ids = [f"id-{i}" for i in range(70_000)]
    seen.remember([(i, 0, None) for i in ids[::2]], {})
    assert set(seen.known(ids)) == set(ids[::2])
