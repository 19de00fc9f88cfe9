"""`onceflow-ops analytics rebuild`: recompute reporting tables from the events the job counted
(onceflow/recompute.py) into new tables, verify them, and swap them in while the job runs.

Why no event is missed or counted twice across the swap (docs/analytics.md, "Rebuilding a table
while the stream runs"): the job folds each micro-batch in ONE transaction that holds the
writers' lock (lock_writers()) and writes its ledger row, its de-duplication ids and the tables
together. The rebuild takes the same lock first, in one transaction, so no fold commits while it
runs: every statement after the lock sees every batch committed before it and none after. The
recompute reads the de-duplication set and order_state, which hold exactly the events of those
batches; the swap makes the live tables equal to it; the next fold adds only events whose ids
are not in the set (the ones it counted are dropped as duplicates), onto the swapped rows.

The swap writes the differences only, in place (DELETE the rows the recompute does not have,
INSERT ... ON CONFLICT DO UPDATE the others that differ): the tables keep their OIDs, grants,
comments, indexes and dependent views, so the running job's prepared statements stay valid, and
analysts' reads never wait (no ACCESS EXCLUSIVE lock, unlike a RENAME or TRUNCATE). Before the
commit the live tables are compared with the rebuilt ones (every row, and the row count and the
sums per currency): any difference rolls the whole rebuild back.

`--dry-run` builds and verifies the new tables in a REPEATABLE READ snapshot without the lock,
reports the differences the swap would apply and rolls back: it changes nothing.
"""

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import psycopg

from onceflow import recompute

Cursor = psycopg.Cursor[tuple[Any, ...]]
# How long the rebuild waits for the job's fold to release the writers' lock.
LOCK_TIMEOUT = "60s"
SAMPLES = 10
# Columns a customer's and a day's figures share per currency (every placement and cancellation
# has a known day; a payment may not, so paid_cents is not compared).
SHARED_CUSTOMER_DAILY = ("orders_placed", "placed_cents", "cancelled_cents", "refunded_cents")
BOOKKEEPING = "SELECT pronamespace::regnamespace::text FROM pg_proc WHERE proname = 'lock_writers'"


class RebuildError(Exception):
    """A rebuild refused (bad input) or whose verification failed: nothing was changed."""


@dataclass(frozen=True)
class Difference:
    """One row where the live table and the rebuilt one differ: `live` None = missing, `rebuilt`
    None = a row the recompute does not have."""

    kind: str  # missing | extra | different
    live: dict[str, Any] | None
    rebuilt: dict[str, Any] | None


@dataclass(frozen=True)
class TableReport:
    """What the rebuild of one table found (and applied, unless a dry run)."""

    table: str
    rows: int
    missing: int
    extra: int
    different: int
    # Sums of every counted column per currency, of the rebuilt table ("rows": its rows).
    totals: dict[str, dict[str, int]]
    samples: list[Difference] = field(default_factory=list)

    @property
    def changes(self) -> int:
        return self.missing + self.extra + self.different


@dataclass(frozen=True)
class Report:
    dry_run: bool
    bookkeeping: str
    events: int  # rows of recompute_events: (order, event type) pairs recomputed
    tables: list[TableReport]
    lock_wait_s: float  # waiting for the job's fold to release the writers' lock
    lock_held_s: float  # from the lock to the commit: how long the job's next fold waited


def parse_tables(values: list[str] | None) -> list[str]:
    """The tables named by --tables (each value may hold several, comma-separated); all of
    recompute.TABLES when none. An unknown name is a RebuildError that names the known ones."""
    names = [n.strip() for v in values or [] for n in v.split(",") if n.strip()]
    unknown = [n for n in names if n not in recompute.TABLES]
    if unknown:
        raise RebuildError(
            f"unknown table {', '.join(repr(n) for n in unknown)}: a rebuild recomputes "
            f"{', '.join(recompute.TABLES)}"
        )
    chosen = set(names) or set(recompute.TABLES)
    return [t for t in recompute.TABLES if t in chosen]


def rebuild(dsn: str, tables: list[str], *, dry_run: bool) -> Report:
    """Rebuild `tables` (recompute.TABLES names) in one transaction; see the module's docstring."""
    with psycopg.connect(dsn) as conn:
        if dry_run:
            conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        with conn.cursor() as cur:
            started = time.monotonic()
            bookkeeping = _bookkeeping(cur)
            if not dry_run:
                cur.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
                cur.execute(f"SELECT {bookkeeping}.lock_writers()")
            locked = time.monotonic()
            recompute.prepare(cur.execute, bookkeeping)
            cur.execute(f"SELECT count(*) FROM {recompute.EVENTS}")
            events = _one(cur)
            reports = [_build(cur, table) for table in tables]
            _check_consistent({r.table: r for r in reports})
            if not dry_run:
                for table in tables:
                    _swap(cur, table)
                    _verify(cur, table)
        if dry_run:
            conn.rollback()
        else:
            conn.commit()
        done = time.monotonic()
    return Report(
        dry_run=dry_run,
        bookkeeping=bookkeeping,
        events=events,
        tables=reports,
        lock_wait_s=0.0 if dry_run else locked - started,
        lock_held_s=0.0 if dry_run else done - locked,
    )


def _one(cur: Cursor) -> Any:
    row = cur.fetchone()
    assert row is not None
    return row[0]


def _bookkeeping(cur: Cursor) -> str:
    """The schema of the job's bookkeeping, where its writers' lock function is."""
    cur.execute(BOOKKEEPING)
    found = [r[0] for r in cur.fetchall()]
    if len(found) != 1:
        raise RebuildError(f"expected one lock_writers() function, found {len(found)}: migrate")
    return str(found[0])


def _new(table: str) -> str:
    return f"rebuilt_{table}"


def _diff(table: str) -> str:
    return f"rebuild_diff_{table}"


def _on(left: str, right: str, key: list[str]) -> str:
    return " AND ".join(f"{left}.{k} = {right}.{k}" for k in key)


def _build(cur: Cursor, table: str) -> TableReport:
    """Recompute `table` into temp table rebuilt_<table> and its differences with the live one
    into rebuild_diff_<table> (kind, the key, both rows as JSON)."""
    live, new, diff = f"analytics.{table}", _new(table), _diff(table)
    key, cols = recompute.key(table), recompute.columns(table)
    cur.execute(f"CREATE TEMP TABLE {new} ON COMMIT DROP AS SELECT {cols} FROM {live} LIMIT 0")
    recompute.fill(cur.execute, table, new)
    cur.execute(f"ALTER TABLE {new} ADD PRIMARY KEY ({', '.join(key)})")
    cur.execute(f"ANALYZE {new}")
    keys = ", ".join(f"coalesce(l.{k}, r.{k}) AS {k}" for k in key)
    cur.execute(
        f"CREATE TEMP TABLE {diff} ON COMMIT DROP AS"
        f" SELECT CASE WHEN l.{key[0]} IS NULL THEN 'missing'"
        f" WHEN r.{key[0]} IS NULL THEN 'extra' ELSE 'different' END AS kind, {keys},"
        " CASE WHEN l IS NULL THEN NULL ELSE to_jsonb(l) END AS live,"
        " CASE WHEN r IS NULL THEN NULL ELSE to_jsonb(r) END AS rebuilt"
        f" FROM (SELECT {cols} FROM {live}) l FULL JOIN (SELECT {cols} FROM {new}) r"
        f" ON {_on('l', 'r', key)}"
        " WHERE to_jsonb(l) IS DISTINCT FROM to_jsonb(r)"
    )
    cur.execute(f"SELECT kind, count(*) FROM {diff} GROUP BY kind")
    kinds = Counter({kind: int(n) for kind, n in cur.fetchall()})
    cur.execute(f"SELECT kind, live, rebuilt FROM {diff} ORDER BY {', '.join(key)} LIMIT {SAMPLES}")
    samples = [Difference(kind, live_row, new_row) for kind, live_row, new_row in cur.fetchall()]
    totals = _totals(cur, new, table)
    return TableReport(
        table=table,
        rows=sum(t["rows"] for t in totals.values()),
        missing=kinds["missing"],
        extra=kinds["extra"],
        different=kinds["different"],
        totals=totals,
        samples=samples,
    )


def _counted(table: str) -> list[str]:
    """The counted (bigint) columns of `table`: all filled ones but the key and timestamps."""
    key = recompute.key(table)
    return [c for c in recompute.names(table) if c not in key and not c.endswith("_at")]


def _totals(cur: Cursor, relation: str, table: str) -> dict[str, dict[str, int]]:
    """Per currency: the number of rows of `relation` and the sum of each counted column."""
    counted = _counted(table)
    sums = ", ".join(f"coalesce(sum({c}), 0)" for c in counted)
    cur.execute(f"SELECT currency, count(*), {sums} FROM {relation} GROUP BY currency")
    return {
        str(currency): {"rows": int(rows), **dict(zip(counted, map(int, values), strict=True))}
        for currency, rows, *values in cur.fetchall()
    }


def _check_consistent(reports: dict[str, TableReport]) -> None:
    """The rebuilt tables agree with each other per currency where they count the same events:
    product_sales is daily_product_sales summed over days; the customers' placements,
    cancellations and refunds are the days'."""
    pairs = [
        ("product_sales", "daily_product_sales", _counted("product_sales")),
        ("customer_sales", "daily_sales", list(SHARED_CUSTOMER_DAILY)),
    ]
    for one, other, columns in pairs:
        if one not in reports or other not in reports:
            continue
        a, b = (_project(reports[t].totals, columns) for t in (one, other))
        if a != b:
            raise RebuildError(
                f"the rebuilt {one} and {other} disagree per currency ({a} != {b}): nothing "
                "was changed"
            )


def _project(totals: dict[str, dict[str, int]], columns: list[str]) -> dict[str, dict[str, int]]:
    return {
        cur: {c: v[c] for c in columns} for cur, v in totals.items() if any(v[c] for c in columns)
    }


def _swap(cur: Cursor, table: str) -> None:
    """Make analytics.<table> equal rebuilt_<table>, writing only the rows that differ."""
    live, new, diff = f"analytics.{table}", _new(table), _diff(table)
    key = recompute.key(table)
    cols = recompute.columns(table)
    cur.execute(
        f"DELETE FROM {live} t USING {diff} d WHERE d.kind = 'extra' AND {_on('t', 'd', key)}"
    )
    values = [c for c in recompute.names(table) if c not in key]
    sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in values)
    picked = ", ".join(f"r.{c}" for c in recompute.names(table))
    cur.execute(
        f"INSERT INTO {live} ({cols}) SELECT {picked} FROM {new} r JOIN {diff} d"
        f" ON {_on('r', 'd', key)} WHERE d.kind <> 'extra'"
        f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET {sets}"
    )


def _verify(cur: Cursor, table: str) -> None:
    """After the swap, inside its transaction: analytics.<table> holds exactly the rebuilt rows,
    so the same row count and sums per currency; otherwise RebuildError (rolled back)."""
    live, new, cols = f"analytics.{table}", _new(table), recompute.columns(table)
    cur.execute(
        f"SELECT (SELECT count(*) FROM (SELECT {cols} FROM {live} EXCEPT ALL"
        f" SELECT {cols} FROM {new}) a) + (SELECT count(*) FROM (SELECT {cols} FROM {new}"
        f" EXCEPT ALL SELECT {cols} FROM {live}) b)"
    )
    unequal = _one(cur)
    live_totals, new_totals = _totals(cur, live, table), _totals(cur, new, table)
    if unequal or live_totals != new_totals:
        raise RebuildError(
            f"after the swap analytics.{table} differs from the rebuilt table ({unequal} rows; "
            f"totals {live_totals} != {new_totals}): rolled back, nothing was changed"
        )
