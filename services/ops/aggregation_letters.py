"""The aggregation stage's dead letters: rows of analytics.dead_letters, read as the analyst
(read-only; the job's role writes them, and replays them: services/ops/replay.py)."""

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from onceflow.settings import Settings
from services.ops.dead_letters import DeadLetter, Filter, Position, Stage

SQL = Path(__file__).parent / "sql"
LIST = (SQL / "dead_letters_list.sql").read_text()
REASONS = (SQL / "dead_letters_reasons.sql").read_text()
ONE = (
    "SELECT topic, kafka_partition, kafka_offset, error, received_at, replayed_at,"
    " replayed_event_id, replay_batch_id, key, value FROM analytics.dead_letters"
    " WHERE topic = %s AND kafka_partition = %s AND kafka_offset = %s"
)


def _letter(row: tuple[Any, ...]) -> DeadLetter:
    topic, partition, offset, error, at, replayed_at, event_id, batch_id, *raw = row
    key, value = raw if raw else (None, None)
    return DeadLetter(
        stage=Stage.AGGREGATION,
        topic=topic,
        partition=partition,
        offset=offset,
        key=None if key is None else bytes(key),
        value=None if value is None else bytes(value),
        error=error,
        at=at,
        replayed_at=replayed_at,
        replayed_event_id=None if event_id is None else str(event_id),
        replay_batch_id=batch_id,
    )


def _params(wanted: Filter) -> Mapping[str, object]:
    return {"since": wanted.since, "reason": wanted.reason, "limit": wanted.limit}


def listing(*, settings: Settings, wanted: Filter) -> list[DeadLetter]:
    """The stage's dead letters that pass `wanted`, newest first (without raw bytes)."""
    with psycopg.connect(settings.dsn("analyst")) as conn:
        return [_letter(row) for row in conn.execute(LIST, _params(wanted)).fetchall()]


def reasons(*, settings: Settings, wanted: Filter) -> list[tuple[str, int, datetime]]:
    """(reason, dead letters, newest) of the stage's dead letters that pass `wanted`."""
    with psycopg.connect(settings.dsn("analyst")) as conn:
        return [(e, int(n), at) for e, n, at in conn.execute(REASONS, _params(wanted)).fetchall()]


def find(*, settings: Settings, position: Position) -> DeadLetter | None:
    """The dead letter at `position`, with its raw key and value, or None."""
    with psycopg.connect(settings.dsn("analyst")) as conn:
        row = conn.execute(ONE, (position.topic, position.partition, position.offset)).fetchone()
    return None if row is None else _letter(row)
