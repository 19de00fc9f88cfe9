"""Apply one staged micro-batch to analytics.* inside the caller's transaction (set-based SQL).

Staging (COPY into temp tables): t_events (one row per valid record, transforms.event_rows,
with the items of OrderPlaced/OrderCancelled records as a jsonb array), t_dead (dead letters).
Then:
1. t_new = the first record of each event id in the batch, minus the ids already in
   analytics.applied_events (counted by an earlier batch). Those ids are recorded.
2. Every table gets the per-key aggregate of t_new, added with INSERT ... SELECT ... GROUP BY
   ... ON CONFLICT DO UPDATE (sums add, first/last take min/max, an order's state moves only
   to a later event).
3. Dead letters are inserted once per (topic, partition, offset); freshness and the ledger row
   are written by the caller (sink.py) in the same transaction.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from spark_jobs.aggregation import parse, transforms

Cursor = psycopg.Cursor[Any]

TEMP_TABLES = (
    "CREATE TEMP TABLE IF NOT EXISTS t_events (kafka_partition integer, kafka_offset bigint,"
    " event_id uuid, event_type text, occurred_at timestamptz, day date, order_id text,"
    " customer_id text, currency text, status text, status_rank smallint, total_cents bigint,"
    " items jsonb) ON COMMIT DELETE ROWS",
    "CREATE TEMP TABLE IF NOT EXISTS t_new (LIKE t_events) ON COMMIT DELETE ROWS",
    "CREATE TEMP TABLE IF NOT EXISTS t_dead (topic text, kafka_partition integer,"
    " kafka_offset bigint, key bytea, value bytea, error text) ON COMMIT DELETE ROWS",
)

COPY_INTO = {
    "events": f"COPY t_events ({', '.join(transforms.EVENT_ROW_COLUMNS)}) FROM STDIN",
    "dead": f"COPY t_dead ({', '.join(parse.DEAD_LETTER_COLUMNS)}) FROM STDIN",
}

NEW_EVENTS = (
    # In-batch duplicates: keep the first record of each event id.
    """
    INSERT INTO t_new
    SELECT DISTINCT ON (event_id) * FROM t_events ORDER BY event_id, kafka_partition, kafka_offset
    """,
    # Durable de-duplication: drop events an earlier batch already counted.
    "DELETE FROM t_new n USING analytics.applied_events a WHERE a.event_id = n.event_id",
    # Writers are serialised by the advisory lock: a conflict here would be a bug, so no
    # ON CONFLICT clause; it would abort the transaction and the batch would be retried.
    "INSERT INTO analytics.applied_events (event_id) SELECT event_id FROM t_new",
)


UPSERTS = (
    """
    INSERT INTO analytics.daily_sales AS d
    SELECT day, currency,
        count(*) FILTER (WHERE event_type = 'OrderPlaced'),
        count(*) FILTER (WHERE event_type = 'OrderPaid'),
        count(*) FILTER (WHERE event_type = 'OrderShipped'),
        count(*) FILTER (WHERE event_type = 'OrderCancelled'),
        coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPlaced'), 0),
        coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPaid'), 0),
        coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderCancelled'), 0)
    FROM t_new GROUP BY day, currency
    ON CONFLICT (day, currency) DO UPDATE SET
        orders_placed    = d.orders_placed    + EXCLUDED.orders_placed,
        orders_paid      = d.orders_paid      + EXCLUDED.orders_paid,
        orders_shipped   = d.orders_shipped   + EXCLUDED.orders_shipped,
        orders_cancelled = d.orders_cancelled + EXCLUDED.orders_cancelled,
        placed_cents     = d.placed_cents     + EXCLUDED.placed_cents,
        paid_cents       = d.paid_cents       + EXCLUDED.paid_cents,
        cancelled_cents  = d.cancelled_cents  + EXCLUDED.cancelled_cents
    """,
    """
    INSERT INTO analytics.customer_sales AS c
    SELECT customer_id,
        count(*) FILTER (WHERE event_type = 'OrderPlaced'),
        coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPlaced'), 0),
        coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPaid'), 0),
        coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderCancelled'), 0),
        min(occurred_at) FILTER (WHERE event_type = 'OrderPlaced'),
        max(occurred_at) FILTER (WHERE event_type = 'OrderPlaced')
    FROM t_new GROUP BY customer_id
    ON CONFLICT (customer_id) DO UPDATE SET
        orders_placed   = c.orders_placed   + EXCLUDED.orders_placed,
        placed_cents    = c.placed_cents    + EXCLUDED.placed_cents,
        paid_cents      = c.paid_cents      + EXCLUDED.paid_cents,
        cancelled_cents = c.cancelled_cents + EXCLUDED.cancelled_cents,
        first_order_at  = LEAST(c.first_order_at, EXCLUDED.first_order_at),
        last_order_at   = GREATEST(c.last_order_at, EXCLUDED.last_order_at)
    """,
    """
    INSERT INTO analytics.product_sales AS p
    SELECT i.sku,
        coalesce(sum(i.quantity) FILTER (WHERE n.event_type = 'OrderPlaced'), 0),
        coalesce(sum(i.quantity * i.unit_price_cents)
                 FILTER (WHERE n.event_type = 'OrderPlaced'), 0),
        coalesce(sum(i.quantity) FILTER (WHERE n.event_type = 'OrderCancelled'), 0),
        coalesce(sum(i.quantity * i.unit_price_cents)
                 FILTER (WHERE n.event_type = 'OrderCancelled'), 0)
    FROM t_new n,
        -- items is null except on the events product_sales counts (transforms.counted_items)
        jsonb_to_recordset(n.items) AS i(sku text, quantity bigint, unit_price_cents bigint)
    GROUP BY i.sku
    ON CONFLICT (sku) DO UPDATE SET
        units_placed    = p.units_placed    + EXCLUDED.units_placed,
        placed_cents    = p.placed_cents    + EXCLUDED.placed_cents,
        units_cancelled = p.units_cancelled + EXCLUDED.units_cancelled,
        cancelled_cents = p.cancelled_cents + EXCLUDED.cancelled_cents
    """,
    """
    INSERT INTO analytics.order_state AS o
    SELECT DISTINCT ON (order_id) order_id, status, status_rank, occurred_at
    FROM t_new ORDER BY order_id, occurred_at DESC, status_rank DESC
    ON CONFLICT (order_id) DO UPDATE SET
        status        = EXCLUDED.status,
        status_rank   = EXCLUDED.status_rank,
        last_event_at = EXCLUDED.last_event_at
    WHERE (EXCLUDED.last_event_at, EXCLUDED.status_rank) > (o.last_event_at, o.status_rank)
    """,
)

DEAD_LETTERS = (
    f"INSERT INTO analytics.dead_letters ({', '.join(parse.DEAD_LETTER_COLUMNS)})"
    f" SELECT {', '.join(parse.DEAD_LETTER_COLUMNS)} FROM t_dead ON CONFLICT DO NOTHING"
)

OFFSETS = """
    SELECT kafka_partition, min(kafka_offset), max(kafka_offset), count(*)
    FROM (SELECT kafka_partition, kafka_offset FROM t_events
          UNION ALL SELECT kafka_partition, kafka_offset FROM t_dead) r
    GROUP BY kafka_partition ORDER BY kafka_partition
"""

FRESHNESS_UPSERT = """
    INSERT INTO analytics.freshness AS f (stream, last_event_at, last_applied_at, events_applied)
    SELECT %s, max(occurred_at), clock_timestamp(), count(*) FROM t_new
    ON CONFLICT (stream) DO UPDATE SET
        last_event_at   = GREATEST(f.last_event_at, EXCLUDED.last_event_at),
        last_applied_at = EXCLUDED.last_applied_at,
        events_applied  = f.events_applied + EXCLUDED.events_applied
"""


@dataclass(frozen=True)
class Merged:
    """What merging one staged batch did."""

    records: int
    valid_records: int
    events_new: int
    dead_letters: int
    offsets: dict[str, dict[str, int]]
    last_event_at: datetime | None


def stage(cur: Cursor, payloads: dict[str, str]) -> None:
    """Create the temp tables (once per connection) and COPY the batch's payloads in."""
    for statement in TEMP_TABLES:
        cur.execute(statement)
    for kind, copy_sql in COPY_INTO.items():
        text = payloads.get(kind)
        if text:
            with cur.copy(copy_sql) as copy:
                copy.write(text)


def merge(cur: Cursor, stream: str, after_first_upsert: Callable[[], None] | None = None) -> Merged:
    """Fold the staged batch into analytics.* (the caller owns the transaction)."""
    cur.execute(OFFSETS)
    offsets = {
        str(p): {"first": int(first), "last": int(last), "records": int(n)}
        for p, first, last, n in cur.fetchall()
    }
    cur.execute("SELECT count(*) FROM t_events")
    valid_row = cur.fetchone()
    valid = int(valid_row[0]) if valid_row else 0
    for statement in NEW_EVENTS:
        cur.execute(statement)
    events_new = cur.rowcount
    if events_new > 5_000:
        cur.execute("ANALYZE t_new")
    for i, statement in enumerate(UPSERTS):
        if events_new:
            cur.execute(statement)
        if i == 0 and after_first_upsert is not None:
            after_first_upsert()
    cur.execute(DEAD_LETTERS)
    dead = cur.rowcount
    cur.execute(FRESHNESS_UPSERT, (stream,))
    cur.execute("SELECT max(occurred_at) FROM t_new")
    last_row = cur.fetchone()
    return Merged(
        records=sum(o["records"] for o in offsets.values()),
        valid_records=valid,
        events_new=events_new,
        dead_letters=dead,
        offsets=offsets,
        last_event_at=last_row[0] if last_row else None,
    )
