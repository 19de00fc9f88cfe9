"""Apply one staged micro-batch to analytics.* inside the caller's transaction (set-based SQL).

The batch is in the session's temp tables (created by `prepare`, filled from the staging area by
unstage.load): t_events (one row per valid record, with the items of OrderPlaced/OrderCancelled
as a jsonb array, and its content fingerprint), t_dead (dead letters). Then:
1. t_new = the first record of each event id in the batch, minus the events an earlier batch
   counted (aggregation.applied_events, partitioned by occurred_at, looked up by event id). A
   record whose event id was counted with another content fingerprint (by an earlier batch, else
   by its first record in this batch) is a conflicting duplicate: a dead letter "event id reused
   with different content" (its raw key and value read again by `raw_records`), not an event;
   an unknown fingerprint (ids remembered before migration 0012) claims no conflict. Events
   older than the horizon (ids that may be forgotten) are counted and traced in
   aggregation.late_events; the others' ids are remembered, each with its journey (order id,
   type, Kafka position and timestamp, and this batch's (query id, batch id)) and fingerprint.
2. t_products = the batch's items per day, SKU and currency (sql/products.sql); t_refunds =
   the refunds the batch completes: a cancellation of a paid order is counted once, by the
   batch after which both its OrderCancelled and an OrderPaid are counted (in the batch, or
   before it: aggregation.order_state.paid / cancelled_at), whatever order they arrive in, on the
   cancellation's day (sql/refunds.sql).
3. Every table gets the per-key aggregate of t_new, t_refunds or t_products, added with
   INSERT ... SELECT ... ON CONFLICT DO UPDATE (sums add, first/last take min/max, an order's
   status moves only to a later event, its paid / cancelled_at are kept once known).
4. Dead letters are inserted once per (topic, partition, offset); freshness is bumped (and
   read back: the newest occurred_at applied). The caller (sink.py) writes the ledger row in
   the same transaction.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from onceflow.event_definition import REUSED_ID
from spark_jobs.aggregation import staging
from spark_jobs.aggregation.statements import sql

Cursor = psycopg.Cursor[Any]
Position = tuple[int, int]  # Kafka partition, offset
# The raw key and value of the batch's records at some positions (read again from the source).
RawRecords = Callable[[Sequence[Position]], dict[Position, tuple[bytes | None, bytes | None]]]

NEW = staging.StagedTable("t_new", staging.EVENTS.columns)
_DEAD = ", ".join(staging.DEAD_LETTERS.names)
# Each bad record once, whatever replays happen.
KEEP_DEAD_LETTERS = (
    f"INSERT INTO analytics.dead_letters ({_DEAD}) SELECT {_DEAD} FROM {staging.DEAD_LETTERS.name}"
    " ON CONFLICT DO NOTHING"
)
# order_state last: refunds.sql and the tables before it read each order's state before the batch.
UPSERTS = (
    "daily_sales",
    "customer_sales",
    "product_sales",
    "daily_product_sales",
    "order_state",
)
ADD_DEAD_LETTER = (
    f"INSERT INTO {staging.DEAD_LETTERS.name} ({_DEAD}) VALUES (%s, %s, %s, %s, %s, %s)"
)


@dataclass(frozen=True)
class Merged:
    """What merging one staged batch did."""

    records: int
    valid_records: int
    events_new: int
    late_events: int
    dead_letters: int
    offsets: dict[str, dict[str, int]]
    # The newest occurred_at of every event applied so far (analytics.freshness).
    newest_event_at: datetime | None = None
    # Records whose event id was counted with other content (dead letters, in dead_letters;
    # not in valid_records).
    conflicts: int = 0


def prepare(cur: Cursor) -> None:
    """Create the temp tables a batch is folded from (once per connection; emptied at commit)."""
    for table in (
        staging.EVENTS,
        staging.DEAD_LETTERS,
        NEW,
        staging.REUSED,
        staging.COUNTED,
        staging.REFUNDS,
        staging.PRODUCTS,
    ):
        cur.execute(table.create())


def _reused(cur: Cursor, topic: str, raw_records: RawRecords | None) -> int:
    """Turn the batch's conflicting duplicates into dead letters; how many."""
    cur.execute(sql("reused"))
    if not cur.rowcount:
        return 0
    cur.execute(f"SELECT kafka_partition, kafka_offset, key FROM {staging.REUSED.name}")
    reused = [((int(p), int(o)), key) for p, o, key in cur.fetchall()]
    raw = raw_records([at for at, _ in reused]) if raw_records is not None else {}
    cur.executemany(
        ADD_DEAD_LETTER,
        [(topic, *at, *raw.get(at, (key, None)), REUSED_ID) for at, key in reused],
    )
    cur.execute(sql("drop_reused"))
    return len(reused)


def _new_events(cur: Cursor, topic: str, query_id: str, batch_id: int) -> tuple[int, int]:
    """Fill t_new with the batch's uncounted events (t_new holds the first record of each of
    its event ids, t_counted those an earlier batch counted); (new events, of which late)."""
    cur.execute(sql("drop_counted"))
    cur.execute(sql("trace_late"), {"topic": topic})
    late = cur.rowcount
    cur.execute(sql("cover_partitions"))
    # The INSERT into aggregation.applied_events, with each event's journey.
    cur.execute(sql("remember"), {"query_id": query_id, "batch_id": batch_id})
    remembered = cur.rowcount
    return remembered + late, late


def merge(
    cur: Cursor,
    topic: str,
    *,
    query_id: str,
    batch_id: int,
    after_first_upsert: Callable[[], None] | None = None,
    before_upserts: Callable[[Cursor], None] | None = None,
    raw_records: RawRecords | None = None,
) -> Merged:
    """Fold the staged batch `batch_id` of query `query_id` (reading `topic`) into analytics.*
    (the caller owns the transaction); `after_first_upsert` runs once the first table has
    changed (a test's crash point), `before_upserts` with the batch's new events in t_new (a
    test's mutation point); `raw_records` gives the raw key and value of conflicting
    duplicates for their dead letters (without it: the key is the order id, the value NULL)."""
    cur.execute(sql("offsets"))
    offsets = {
        str(p): {"first": int(first), "last": int(last), "records": int(n)}
        for p, first, last, n in cur.fetchall()
    }
    cur.execute(sql("distinct_events"))
    cur.execute(sql("counted"))
    conflicts = _reused(cur, topic, raw_records)
    cur.execute(f"SELECT count(*) FROM {staging.EVENTS.name}")
    (valid,) = cur.fetchone() or (0,)
    events_new, late = _new_events(cur, topic, query_id, batch_id)
    if events_new > 5_000:
        cur.execute(f"ANALYZE {NEW.name}")
    if events_new and before_upserts is not None:
        before_upserts(cur)
    if events_new:
        cur.execute(sql("refunds"))
        cur.execute(sql("products"))
        for i, table in enumerate(UPSERTS):
            cur.execute(sql(f"upsert_{table}"))
            if i == 0 and after_first_upsert is not None:
                after_first_upsert()
    cur.execute(KEEP_DEAD_LETTERS)
    dead = cur.rowcount
    cur.execute(sql("freshness"), {"stream": topic})
    (newest,) = cur.fetchone() or (None,)
    return Merged(
        records=sum(o["records"] for o in offsets.values()),
        valid_records=valid,
        events_new=events_new,
        late_events=late,
        dead_letters=dead,
        offsets=offsets,
        newest_event_at=newest,
        conflicts=conflicts,
    )
