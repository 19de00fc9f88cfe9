"""The fold of a batch the database refused for a data reason (sink.py: its set-based fold failed
with SQLSTATE class 22 or 23), again, piece by piece, in the batch's one transaction.

The staged batch is loaded as always (unstage.load, checked complete), then held aside
(sql/isolate_hold.sql); its events are folded back in pieces by merge.merge, each under a
savepoint (isolate.py), so a refused piece is split down to the event the database refuses. Each
refused record becomes a dead letter with its raw key and value (read again from the batch) and
the database's message, in a last piece with the batch's own dead letters. The caller writes the
ledger row, for all of it, in the same transaction: a crash anywhere rolls everything back, and
the re-run batch does it again, exactly once.
"""

import logging
from collections.abc import Callable, Sequence
from dataclasses import fields
from datetime import datetime
from typing import Any

import psycopg

from spark_jobs.aggregation import isolate, merge, staging
from spark_jobs.aggregation.statements import sql

log = logging.getLogger("onceflow.aggregation.refold")

Conn = psycopg.Connection[Any]
Cursor = psycopg.Cursor[Any]
# The batch's events and dead letters, held aside (sql/isolate_hold.sql).
HELD, HELD_DEAD = "t_held", "t_held_dead"
_EVENTS = ", ".join(staging.EVENTS.names)
PIECE = (
    f"INSERT INTO {staging.EVENTS.name} ({_EVENTS}) SELECT {_EVENTS} FROM {HELD}"
    " WHERE piece_row >= %s AND piece_row < %s"
)
TEMP_TABLES = (
    "SELECT relname FROM pg_class WHERE relnamespace = pg_my_temp_schema() AND relkind = 'r'"
    " AND relname <> ALL(%s) ORDER BY relname"
)
PIECES = f"SELECT coalesce(max(piece_row) + 1, 0) FROM {HELD}"
REFUSED = (
    f"SELECT piece_row, kafka_partition, kafka_offset FROM {HELD} WHERE piece_row = ANY(%s)"
    " ORDER BY kafka_partition, kafka_offset"
)
_DEAD = ", ".join(staging.DEAD_LETTERS.names)
RESTORE_DEAD = f"INSERT INTO {staging.DEAD_LETTERS.name} ({_DEAD}) SELECT {_DEAD} FROM {HELD_DEAD}"


def _emptying(cur: Cursor) -> list[str]:
    """DELETEs for every temp table the fold uses but the held ones, so that each piece is
    folded from empty tables, like a batch of its own (merge.merge appends to some)."""
    cur.execute(TEMP_TABLES, ([HELD, HELD_DEAD],))
    return [f"DELETE FROM {name}" for (name,) in cur.fetchall()]


def _offsets(parts: Sequence[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """Offsets per partition (merge.Merged.offsets) of disjoint pieces, as of one batch."""
    out: dict[str, dict[str, int]] = {}
    for part in parts:
        for partition, o in part.items():
            seen = out.setdefault(partition, dict(o, records=0))
            seen["first"] = min(seen["first"], o["first"])
            seen["last"] = max(seen["last"], o["last"])
            seen["records"] += o["records"]
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def combine(parts: Sequence[merge.Merged]) -> merge.Merged:
    """What folding disjoint pieces of one batch did, as one merge.Merged."""
    values: dict[str, Any] = {}
    for f in fields(merge.Merged):
        got = [v for v in (getattr(p, f.name) for p in parts) if v is not None]
        if not got:
            values[f.name] = None
        elif isinstance(got[0], dict):
            values[f.name] = _offsets(got)
        elif isinstance(got[0], datetime):
            values[f.name] = max(got)
        else:
            values[f.name] = sum(got)
    return merge.Merged(**values)


def _dead_letters(
    cur: Cursor, topic: str, refused: Sequence[isolate.Refusal], raw: merge.RawRecords | None
) -> None:
    """Put each record of the refused pieces into t_dead, raw, with the database's message."""
    if not refused:
        return
    reasons = {r.index: r.reason for r in refused}
    cur.execute(REFUSED, (list(reasons),))
    rows = [(int(piece), int(p), int(o)) for piece, p, o in cur.fetchall()]
    records = {} if raw is None else raw([(p, o) for _, p, o in rows])
    for piece, p, o in rows:
        key, value = records.get((p, o), (None, None))
        log.warning("record %d@%d is a dead letter: %s", o, p, reasons[piece])
        cur.execute(merge.ADD_DEAD_LETTER, (topic, p, o, key, value, reasons[piece]))


def fold(
    conn: Conn,
    cur: Cursor,
    query_id: str,
    batch_id: int,
    *,
    topic: str,
    raw: merge.RawRecords | None,
    after_piece: Callable[[], None] | None = None,
) -> merge.Merged:
    """Fold the loaded batch (unstage.load) of `topic` in pieces, inside the caller's
    transaction; `raw` reads raw records again, `after_piece` runs after each piece applied (a
    test's crash point)."""
    cur.execute(sql("isolate_hold"))
    emptying = _emptying(cur)
    (count,) = cur.execute(PIECES).fetchone() or (0,)

    def folded(load: Callable[[], object]) -> merge.Merged:
        """merge.merge of what `load` puts into the emptied temp tables."""
        for statement in emptying:
            cur.execute(statement)
        load()
        return merge.merge(cur, topic, query_id=query_id, batch_id=batch_id, raw_records=raw)

    def piece(start: int, stop: int) -> merge.Merged:
        merged = folded(lambda: cur.execute(PIECE, (start, stop)))
        if after_piece is not None:
            after_piece()
        return merged

    def dead_letters() -> None:
        cur.execute(RESTORE_DEAD)
        _dead_letters(cur, topic, refused, raw)

    applied, refused = isolate.pieces(conn, int(count), piece)
    return combine([*applied, folded(dead_letters)])
