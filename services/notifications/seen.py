"""The event ids already notified, from every input partition: a local SQLite cache of the
whole changelog.

The truth is the changelog topic (keyed by event id), written in the same Kafka transaction as
the notifications and the input offsets. This cache only spares re-reading all of it: it
records, per changelog partition, the offset it has read up to. Only reading the changelog moves
those restore points (restore.py); an instance's own committed ids are added right after its
commit, and read again, harmlessly, when the reader reaches them. Deleting the file costs one
full re-read, nothing else.

Each id keeps its event's content fingerprint (fingerprint.py, in hex), so a copy with
the same id and other content is recognised; ids remembered without one (by a version before
fingerprints, in the changelog or in an older cache) have NULL: their content is unknown.
"""

import sqlite3
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ids (
    event_id TEXT PRIMARY KEY, occurred INTEGER NOT NULL, content TEXT) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ids_occurred ON ids (occurred);
CREATE TABLE IF NOT EXISTS restored (
    partition INTEGER PRIMARY KEY, next_offset INTEGER NOT NULL);
"""
# A cache of the per-partition layout (table `seen`, maybe without fingerprints) keeps its ids
# (NULL content: unknown) and its restore points: everything before them is in it.
_OLDER = {
    True: "INSERT OR IGNORE INTO ids SELECT event_id, occurred, content FROM seen",
    False: "INSERT OR IGNORE INTO ids SELECT event_id, occurred, NULL FROM seen",
}
_PARAMETERS = 30_000  # below SQLite's limit of bound parameters per statement (32,766)
Entry = tuple[str, int, str | None]  # event id, occurred_at (epoch s), content fingerprint


def epoch_of(occurred_at: str) -> int:
    """A v1 `occurred_at` in whole seconds since the epoch."""
    return int(datetime.fromisoformat(occurred_at).timestamp())


class SeenIds:
    """Remembered event ids, with the changelog offset each partition is restored up to."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # One thread at a time: the processor's loop, or its committer thread while it holds
        # the batch in flight (processor.py hands it over and back).
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        # A cache: losing the last writes on a power cut costs a re-read, never correctness.
        self._db.executescript("PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;" + _SCHEMA)
        older = {row[1] for row in self._db.execute("PRAGMA table_info(seen)")}
        if older:
            with self._db:
                self._db.execute("BEGIN")
                self._db.execute(_OLDER["content" in older])
                self._db.execute("DROP TABLE seen")

    def next_offset(self, partition: int) -> int | None:
        """The changelog offset to restore `partition` from (None: from its beginning)."""
        row = self._db.execute(
            "SELECT next_offset FROM restored WHERE partition = ?", (partition,)
        ).fetchone()
        return None if row is None else int(row[0])

    def known(self, event_ids: list[str]) -> dict[str, str | None]:
        """Which of `event_ids` were already notified (from any input partition), each with its
        content fingerprint (None: unknown)."""
        known: dict[str, str | None] = {}
        for start in range(0, len(event_ids), _PARAMETERS):
            chunk = event_ids[start : start + _PARAMETERS]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT event_id, content FROM ids WHERE event_id IN ({marks})", chunk
            )
            known.update(rows)
        return known

    def remember(self, entries: Iterable[Entry], next_offsets: dict[int, int]) -> None:
        """Add committed ids and move each partition's restore point, in one SQLite commit."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR IGNORE INTO ids VALUES (?, ?, ?)", entries)
            self._db.executemany(
                "INSERT INTO restored VALUES (?, ?) ON CONFLICT (partition) DO UPDATE "
                "SET next_offset = max(next_offset, excluded.next_offset)",
                next_offsets.items(),
            )

    def forget_before(self, epoch: int) -> int:
        """Drop ids of events that occurred before `epoch` (outside the window); return how many."""
        with self._db:
            return self._db.execute("DELETE FROM ids WHERE occurred < ?", (epoch,)).rowcount

    def close(self) -> None:
        """Close the file."""
        self._db.close()
