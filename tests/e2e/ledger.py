"""What the job's bookkeeping says it counted since a baseline: read in one snapshot with the
reporting tables, so the oracle can attribute every change of a global table to the events
behind it, the test's own and any other writer's."""

import json
from collections import Counter
from dataclasses import dataclass

from tests.e2e import analytics

Position = tuple[int, int]  # (kafka_partition, kafka_offset) on the stack's topic


@dataclass(frozen=True)
class Counted:
    event_id: str
    order_id: str | None
    event_type: str | None
    position: Position


@dataclass(frozen=True)
class Snapshot:
    """The analytics tables and the job's bookkeeping, as one transaction saw them."""

    daily: Counter[tuple[str, str, str]]
    events_applied: int
    batches: dict[str, int]  # query id -> its newest batch
    late: frozenset[Position]
    status_view: Counter[str]
    status_of_states: Counter[str]


def snapshot(conn: analytics.Conn) -> Snapshot:
    """Call inside a REPEATABLE READ transaction."""
    (applied,) = conn.execute(
        "SELECT coalesce(sum(events_applied), 0) FROM analytics.freshness"
    ).fetchone() or (0,)
    batches = conn.execute(
        "SELECT query_id, max(batch_id) FROM aggregation.applied_batches GROUP BY query_id"
    )
    late = conn.execute("SELECT kafka_partition, kafka_offset FROM aggregation.late_events")
    of_states = conn.execute("SELECT status, count(*) FROM aggregation.order_state GROUP BY status")
    return Snapshot(
        daily=analytics.daily_sales(conn),
        events_applied=int(applied),
        batches={q: int(b) for q, b in batches},
        late=frozenset((int(p), int(o)) for p, o in late),
        status_view=analytics.status_counts(conn),
        status_of_states=Counter({s: int(n) for s, n in of_states}),
    )


def counted_since(conn: analytics.Conn, since: dict[str, int]) -> list[Counted]:
    """Every event the de-duplication set gained after the batches of `since`."""
    rows = conn.execute(
        "SELECT event_id::text, order_id, event_type, kafka_partition, kafka_offset"
        " FROM aggregation.applied_events"
        " WHERE batch_id > coalesce((%s::jsonb ->> query_id)::bigint, -1)",
        (json.dumps(since),),
    )
    return [Counted(e, o, t, (int(p), int(off))) for e, o, t, p, off in rows]


def remembered(conn: analytics.Conn, event_ids: list[str]) -> Counter[str]:
    """How often each of these event ids is in the de-duplication set (at most once)."""
    rows = conn.execute(
        "SELECT event_id::text, count(*) FROM aggregation.applied_events"
        " WHERE event_id = ANY(%s::uuid[]) GROUP BY event_id",
        (event_ids,),
    )
    return Counter({e: int(n) for e, n in rows})


def order_states(conn: analytics.Conn, order_ids: list[str]) -> dict[str, str]:
    rows = conn.execute(
        "SELECT order_id, status FROM aggregation.order_state WHERE order_id = ANY(%s)",
        (order_ids,),
    )
    return dict(rows.fetchall())
