"""The event ids already notified, per input partition: a local SQLite cache of the changelog.

The truth is the changelog topic, written in the same Kafka transaction as the notifications
and the input offsets. This cache only spares re-reading all of it: it records, per partition,
the changelog offset it has read up to, and is written after a transaction commits (so it is
never ahead of the changelog). Deleting the file costs one full re-read, nothing else.

Each id keeps its event's content fingerprint (fingerprint.py, in hex), so a copy with
the same id and other content is recognised; ids remembered without one (by a version before
fingerprints, in the changelog or in an older cache) have NULL: their content is unknown.
"""

import sqlite3
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS seen (
    partition INTEGER NOT NULL, event_id TEXT NOT NULL, occurred INTEGER NOT NULL, content TEXT,
    PRIMARY KEY (partition, event_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS seen_occurred ON seen (occurred);
CREATE TABLE IF NOT EXISTS restored (
    partition INTEGER PRIMARY KEY, next_offset INTEGER NOT NULL);
"""
# An older cache's table gains the column (NULL: content unknown).
_FINGERPRINT = "ALTER TABLE seen ADD COLUMN content TEXT"
Entry = tuple[int, str, int, str | None]  # partition, event id, occurred_at (epoch s), content


def epoch_of(occurred_at: str) -> int:
    """A v1 `occurred_at` in whole seconds since the epoch."""
    return int(datetime.fromisoformat(occurred_at).timestamp())


class SeenIds:
    """Remembered event ids, with the changelog offset each partition is restored up to."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None)
        # A cache: losing the last writes on a power cut costs a re-read, never correctness.
        self._db.executescript("PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;" + _SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(seen)")}
        if "content" not in columns:
            self._db.execute(_FINGERPRINT)

    def next_offset(self, partition: int) -> int | None:
        """The changelog offset to restore `partition` from (None: from its beginning)."""
        row = self._db.execute(
            "SELECT next_offset FROM restored WHERE partition = ?", (partition,)
        ).fetchone()
        return None if row is None else int(row[0])

    def known(self, partition: int, event_ids: list[str]) -> dict[str, str | None]:
        """Which of `event_ids` were already notified from `partition`, each with its content
        fingerprint (None: unknown)."""
        marks = ",".join("?" * len(event_ids))
        rows = self._db.execute(
            f"SELECT event_id, content FROM seen WHERE partition = ? AND event_id IN ({marks})",
            (partition, *event_ids),
        )
        return {event_id: content for event_id, content in rows}

    def remember(self, entries: Iterable[Entry], next_offsets: dict[int, int]) -> None:
        """Add committed ids and move each partition's restore point, in one SQLite commit."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR IGNORE INTO seen VALUES (?, ?, ?, ?)", entries)
            self._db.executemany(
                "INSERT INTO restored VALUES (?, ?) ON CONFLICT (partition) DO UPDATE "
                "SET next_offset = max(next_offset, excluded.next_offset)",
                next_offsets.items(),
            )

    def forget_before(self, epoch: int) -> int:
        """Drop ids of events that occurred before `epoch` (outside the window); return how many."""
        with self._db:
            return self._db.execute("DELETE FROM seen WHERE occurred < ?", (epoch,)).rowcount

    def close(self) -> None:
        """Close the file."""
        self._db.close()
