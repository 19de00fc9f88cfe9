"""Replay an aggregation dead letter, as it is or corrected, through the job's own fold: ONE
Postgres transaction, as the job's role, serialised with the job by aggregation.lock_writers().

The record must first be a valid v1 event (onceflow.events.parse, the one definition). Then, in
the transaction: an event id already in the de-duplication set changes nothing (replaying twice
applies once), unless the set remembers other content for it (a conflicting copy: refused);
otherwise the event is staged as the executors stage a record (replay_row.py, with the job's
content fingerprint), as batch N of the query `replay` (N: one past the ledger's last), moved
into the fold's temp tables (unstage.load), folded by merge.merge (the same statements as every
batch), released, recorded in the ledger, and the dead letter is marked replayed (migration
0011). An event older than the de-duplication horizon is refused: its id could no longer be
recognised, so a second replay would count it twice. A dead letter replayed once stands for
that event: a later replay must carry the same event id.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from onceflow.events import InvalidEventError, OrderEvent, parse
from onceflow.settings import AggregationSettings, Settings
from services.ops import replay_row
from services.ops.dead_letters import DeadLetterError, Position
from spark_jobs.aggregation import merge, staging, unstage
from spark_jobs.aggregation.statements import sql

QUERY_ID = "replay"
MARK = (Path(__file__).parent / "sql" / "dead_letter_replayed.sql").read_text()
LOCKED = (
    "SELECT key, value, replayed_event_id::text FROM analytics.dead_letters"
    " WHERE topic = %s AND kafka_partition = %s AND kafka_offset = %s FOR UPDATE"
)
NEXT_BATCH = (
    "SELECT coalesce(max(batch_id), -1) + 1 FROM aggregation.applied_batches WHERE query_id = %s"
)
# Whether the de-duplication set holds the event id, and with which content (the job looks an
# id up alone: spark_jobs/aggregation/sql/counted.sql; NULL fingerprint: content unknown).
COUNTED = (
    "SELECT query_id, batch_id, fingerprint FROM aggregation.applied_events"
    " WHERE event_id = %s ORDER BY fingerprint IS NULL LIMIT 1"
)
# Whether the event occurred before the horizon (forgotten_before may be -infinity).
BEFORE_HORIZON = (
    "SELECT %s::timestamptz < forgotten_before, forgotten_before::text FROM aggregation.dedup_state"
)
STAGE = (
    f"INSERT INTO {staging.AREA} ({', '.join((*staging.KEY, *staging.COLUMNS))})"
    f" VALUES ({', '.join(['%s'] * (len(staging.KEY) + len(staging.COLUMNS)))})"
)


@dataclass(frozen=True)
class Replayed:
    """What a replay did: counted the event in batch `batch_id` of query `replay`, or nothing
    because the event id was already counted (by `counted_by`)."""

    id: str
    event_id: str
    event_type: str
    counted: bool
    batch_id: int | None
    counted_by: str | None


def valid_event(
    *, ident: str, key: bytes | None, value: bytes | None, corrected: bool, max_bytes: int
) -> tuple[OrderEvent, bytes]:
    """The v1 event the record holds (as the job reads it: events of at most `max_bytes`);
    DeadLetterError saying, in one sentence, why it is not one."""
    try:
        event = parse(key, value, None, max_bytes)
    except InvalidEventError as exc:
        what = "the corrected record" if corrected else "the stored record"
        raise DeadLetterError(
            f"{ident} was not replayed, nothing changed: {what} is not a valid v1 event ({exc}); "
            "correct the value and pass it with --value-file"
        ) from None
    if value is None:  # parse refuses a missing value; this tells the type checker
        raise DeadLetterError(f"{ident} was not replayed: it has no value")
    return event, value


def _given(replacement: bytes | None, stored: Any) -> bytes | None:
    if replacement is not None:
        return replacement
    return None if stored is None else bytes(stored)


def _connect(settings: Settings) -> psycopg.Connection[tuple[Any, ...]]:
    return psycopg.connect(
        settings.dsn("spark"), options="-c TimeZone=UTC", application_name="onceflow-ops-replay"
    )


def _fold(cur: merge.Cursor, topic: str, row: Mapping[str, Any]) -> int:
    """Fold the one staged row as the next batch of query `replay`; its batch id."""
    cur.execute(NEXT_BATCH, (QUERY_ID,))
    (batch_id,) = cur.fetchone() or (0,)
    cur.execute(STAGE, (QUERY_ID, batch_id, *[row.get(c) for c in staging.COLUMNS]))
    merge.prepare(cur)
    unstage.load(cur, QUERY_ID, batch_id, staging.Counts(records=1, dead_letters=0))
    merged = merge.merge(cur, topic, query_id=QUERY_ID, batch_id=batch_id)
    if merged.events_new != 1:  # checked before: only a change in the fold's rules gets here
        raise RuntimeError(f"the job's fold counted {merged.events_new} events of one replay")
    unstage.release(cur, QUERY_ID, batch_id)
    # The ledger row the sink writes (sql/ledger_insert.sql), for this batch of one event; not
    # through sink.py, which imports PySpark and the job's streaming side.
    ledger = {
        "query_id": QUERY_ID,
        "batch_id": batch_id,
        "topic": topic,
        "offsets": json.dumps(merged.offsets),
        "records": merged.records,
        "events_new": merged.events_new,
        "duplicates": 0,
        "dead_letters": 0,
        "late_events": merged.late_events,
    }
    cur.execute(sql("ledger_insert"), ledger)
    return int(batch_id)


def _same_event(ident: str, event: OrderEvent, replayed_event_id: str | None) -> None:
    """A dead letter stands for one event: a second replay must carry the first one's id, or
    both would be counted."""
    if replayed_event_id is not None and replayed_event_id != event.event_id:
        raise DeadLetterError(
            f"{ident} was not replayed, nothing changed: it was already replayed as event "
            f"{replayed_event_id}, and this record is event {event.event_id}; keep the event_id "
            "of the first replay"
        )


def _same_content(
    ident: str, event: OrderEvent, fingerprint: int, counted: tuple[str, int, int | None]
) -> None:
    """A counted event id with other content is a conflicting copy, never applied (contract
    4c): refuse rather than report it counted."""
    query_id, batch_id, known = counted
    if known is not None and known != fingerprint:
        raise DeadLetterError(
            f"{ident} was not replayed, nothing changed: event {event.event_id} was already "
            f"counted (batch {batch_id} of query {query_id}) with other content, and a counted "
            "event is never changed"
        )


def replay(
    *,
    settings: Settings,
    aggregation: AggregationSettings,
    position: Position,
    key: bytes | None = None,
    value: bytes | None = None,
) -> Replayed:
    """Replay the aggregation dead letter at `position` once (with `key`/`value` replacing the
    stored ones when given); DeadLetterError when it is unknown or not a valid v1 event."""
    topic = position.topic or settings.topic
    with _connect(settings) as conn, conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT aggregation.lock_writers()")
        cur.execute(LOCKED, (topic, position.partition, position.offset))
        stored = cur.fetchone()
        ident = f"aggregation:{topic}:{position.partition}:{position.offset}"
        if stored is None:
            raise DeadLetterError(f"there is no aggregation dead letter {ident}")
        event, valid = valid_event(
            ident=ident,
            key=_given(key, stored[0]),
            value=_given(value, stored[1]),
            corrected=key is not None or value is not None,
            max_bytes=aggregation.agg_max_event_bytes,
        )
        _same_event(ident, event, stored[2])
        row = replay_row.staged_row(
            event=event, value=valid, partition=position.partition, offset=position.offset
        )
        cur.execute(COUNTED, (event.event_id,))
        counted = cur.fetchone()
        batch_id: int | None = None
        if counted is not None:
            _same_content(ident, event, row["fingerprint"], counted)
        else:
            cur.execute(BEFORE_HORIZON, (row["occurred_at"],))
            late, horizon = cur.fetchone() or (False, None)
            if late:
                raise DeadLetterError(
                    f"{ident} was not replayed, nothing changed: its event occurred at "
                    f"{event.occurred_at}, before the de-duplication horizon ({horizon}), "
                    "whose ids are forgotten, so a second replay would count it twice"
                )
            batch_id = _fold(cur, topic, row)
        params = {"event_id": event.event_id, "batch_id": batch_id, "topic": topic,
                  "partition": position.partition, "offset": position.offset}  # fmt: skip
        cur.execute(MARK, params)
    return Replayed(
        id=ident,
        event_id=event.event_id,
        event_type=event.event_type,
        counted=batch_id is not None,
        batch_id=batch_id,
        counted_by=None if counted is None else f"batch {counted[1]} of query {counted[0]}",
    )
