"""`onceflow-ops analytics rebuild`: recompute reporting tables from the events the job counted
(onceflow/recompute.py) into new tables, verify them, and swap them in while the job runs.

Why no event is missed or counted twice across the swap (docs/analytics.md, "Rebuilding the
tables while the stream runs"): the job folds each micro-batch in ONE transaction that holds the
writers' lock (lock_writers()) and writes its ledger row, its de-duplication ids and the tables
together, and nothing else writes the tables. So every snapshot of the database is consistent:
its tables count exactly the events its de-duplication set and order_state hold.

1. In one REPEATABLE READ snapshot S, without the lock (the job keeps folding), the rebuild
   recomputes each table from S's events (R_S) and copies the live table as S sees it (L_S).
2. In one transaction that first takes the writers' lock (no fold commits until it ends; every
   statement after the lock sees every batch committed before it), each table becomes
   R_S + (L_now - L_S): the recompute of what was counted up to S, plus exactly what the job's
   folds added after S (the live table now minus the live table then; the earliest and latest
   order timestamps combine by least / greatest). The next fold adds only events whose ids are
   not in the de-duplication set, onto the swapped rows.
The lock is held for work on the tables' size (a three-way join on keys), not the history's.

The swap writes the differences only, in place (DELETE the rows the result does not have,
INSERT ... ON CONFLICT DO UPDATE the others that differ): the tables keep their OIDs, grants,
comments, indexes and dependent views, so the running job's prepared statements stay valid, and
analysts' reads never wait (no ACCESS EXCLUSIVE lock, unlike a RENAME or TRUNCATE). Before the
commit the live tables are compared with the result (every row, and the row count and the sums
per currency): any difference rolls the whole rebuild back.

`--dry-run` stops after step 1 and reports the differences between R_S and L_S (what the swap
would change, as of S): it takes no lock and changes nothing.
"""

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import psycopg

from onceflow import recompute
from onceflow.schema.metadata import BOOKKEEPING_SCHEMA
from onceflow.settings import get_aggregation_settings


class Cursor(Protocol):
    """What the rebuild's statements need of a cursor (psycopg's, or Bounded)."""

    def execute(self, query: str) -> object: ...
    def fetchone(self) -> tuple[Any, ...] | None: ...
    def fetchall(self) -> list[tuple[Any, ...]]: ...


# How long the rebuild waits for the job's fold to release the writers' lock.
LOCK_TIMEOUT = "60s"
SAMPLES = 10
# How a column that is not a count or sum combines the recompute with the folds since S.
COMBINE = {"first_order_at": "least", "last_order_at": "greatest"}
# Columns a customer's and a day's figures share per currency (every placement and cancellation
# has a known day; a payment may not, so paid_cents is not compared).
SHARED_CUSTOMER_DAILY = ("orders_placed", "placed_cents", "cancelled_cents", "refunded_cents")


class RebuildError(Exception):
    """A rebuild refused (bad input) or whose verification failed: nothing was changed."""


class Bounded:
    """A cursor whose statements may run, all together, only until `deadline` (time.monotonic):
    before each, statement_timeout is set to the time left (Postgres cancels a statement past
    it, and the transaction rolls back)."""

    def __init__(self, cur: psycopg.Cursor[tuple[Any, ...]], deadline: float) -> None:
        self.cur, self.deadline = cur, deadline

    def execute(self, query: str) -> object:
        left_ms = int((self.deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            raise psycopg.errors.QueryCanceled("the budget was spent before the statement")
        self.cur.execute(f"SET LOCAL statement_timeout = {left_ms}")
        return self.cur.execute(query)

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.cur.fetchone()

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.cur.fetchall()


@dataclass(frozen=True)
class Difference:
    """One row where the live table and the result differ: `live` None = missing, `rebuilt`
    None = a row the result does not have."""

    kind: str  # missing | extra | different
    live: dict[str, Any] | None
    rebuilt: dict[str, Any] | None


@dataclass(frozen=True)
class TableReport:
    """What the rebuild of one table found, and changed (nothing in a dry run)."""

    table: str
    rows: int  # rows of the result
    missing: int
    extra: int
    different: int
    # The live table's rows the job's folds changed between the snapshot and the lock.
    folded_since_snapshot: int
    # Sums of every counted column per currency, of the result ("rows": its rows).
    totals: dict[str, dict[str, int]]
    samples: list[Difference] = field(default_factory=list)

    @property
    def changes(self) -> int:
        return self.missing + self.extra + self.different


@dataclass(frozen=True)
class Report:
    dry_run: bool
    events: int  # rows of recompute_events: (order, event type) pairs recomputed at S
    tables: list[TableReport]
    snapshot_s: float  # the recompute, without the lock
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


def lock_budget_s() -> float:
    """How long the swap may hold the writers' lock: half the job's statement timeout, which
    bounds how long the job's fold waits for the lock before it fails."""
    return get_aggregation_settings().agg_pg_statement_timeout_ms / 2000


def rebuild(
    dsn: str,
    tables: list[str],
    *,
    dry_run: bool,
    lock_budget: float | None = None,
    after_snapshot: Callable[[], None] | None = None,
) -> Report:
    """Rebuild `tables` (recompute.TABLES names); see the module's docstring. One session: the
    snapshot's temp tables live until it closes. The swap gives up (RebuildError, nothing
    changed) rather than hold the lock longer than `lock_budget` seconds (lock_budget_s()).
    `after_snapshot` runs between the snapshot and the lock (a test lets folds commit there)."""
    budget = lock_budget_s() if lock_budget is None else lock_budget
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        started = time.monotonic()
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        with conn.transaction():
            recompute.prepare(cur.execute, BOOKKEEPING_SCHEMA)
            cur.execute(f"SELECT count(*) FROM {recompute.EVENTS}")
            events = _one(cur)
            totals = {table: _snapshot(cur, table) for table in tables}
            _check_consistent(totals)
        snapshot_s = time.monotonic() - started
        if dry_run:
            reports = [_compare(cur, t, _rebuilt(t), _at_snapshot(t), 0, totals[t]) for t in tables]
            return Report(True, events, reports, snapshot_s, 0.0, 0.0)
        if after_snapshot is not None:
            after_snapshot()
        conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        with conn.transaction():
            cur.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
            asked = time.monotonic()
            cur.execute(f"SELECT {BOOKKEEPING_SCHEMA}.lock_writers()")
            locked = time.monotonic()
            bounded = Bounded(cur, locked + budget)
            try:
                reports = [_swap(bounded, table) for table in tables]
            except psycopg.errors.QueryCanceled as exc:
                raise RebuildError(
                    f"the swap would hold the writers' lock past its budget of {budget:g} s (half"
                    " the job's statement timeout, so its waiting fold does not fail): rolled"
                    " back, nothing was changed; rebuild fewer tables at a time (--tables)"
                ) from exc
        done = time.monotonic()
    return Report(False, events, reports, snapshot_s, locked - asked, done - locked)


def _one(cur: Cursor) -> Any:
    row = cur.fetchone()
    assert row is not None
    return row[0]


def _live(table: str) -> str:
    return f"analytics.{table}"


def _rebuilt(table: str) -> str:
    return f"rebuild_recomputed_{table}"  # R_S


def _at_snapshot(table: str) -> str:
    return f"rebuild_snapshot_{table}"  # L_S


def _result(table: str) -> str:
    return f"rebuild_result_{table}"  # R_S + (L_now - L_S)


def _on(left: str, right: str, key: list[str]) -> str:
    return " AND ".join(f"{left}.{k} = {right}.{k}" for k in key)


def _temp(cur: Cursor, name: str, table: str, select: str) -> None:
    """Temp table `name` (for the session) of `select`'s rows, keyed as analytics.`table`."""
    cur.execute(f"CREATE TEMP TABLE {name} AS {select}")
    cur.execute(f"ALTER TABLE {name} ADD PRIMARY KEY ({', '.join(recompute.key(table))})")
    cur.execute(f"ANALYZE {name}")


def _snapshot(cur: Cursor, table: str) -> dict[str, dict[str, int]]:
    """In snapshot S: R_S (the recompute) and L_S (the live table); R_S's totals."""
    cols = recompute.columns(table)
    _temp(cur, _rebuilt(table), table, f"SELECT {cols} FROM {_live(table)} LIMIT 0")
    recompute.fill(cur.execute, table, _rebuilt(table))
    _temp(cur, _at_snapshot(table), table, f"SELECT {cols} FROM {_live(table)}")
    return _totals(cur, _rebuilt(table), table)


def _combined(table: str) -> str:
    """The SELECT of R_S + (L_now - L_S), under the lock: per key, each count and sum is the
    recompute's plus what the folds added since S; a timestamp the folds moved since S is
    combined with the recompute's (COMBINE). Keys neither recomputed nor folded since S go.
    Column `folded` says which rows the folds changed since S."""
    key = recompute.key(table)
    cols = []
    for c in recompute.names(table):
        if c in key:
            cols.append(f"coalesce(r.{c}, l.{c}) AS {c}")
        elif c in COMBINE:
            cols.append(
                f"CASE WHEN l.{c} IS DISTINCT FROM s.{c} THEN {COMBINE[c]}(r.{c}, l.{c})"
                f" ELSE r.{c} END AS {c}"
            )
        else:
            cols.append(f"coalesce(r.{c}, 0) + coalesce(l.{c}, 0) - coalesce(s.{c}, 0) AS {c}")
    live_cols = recompute.columns(table)
    return (
        f"SELECT {', '.join(cols)}, l IS DISTINCT FROM s AS folded FROM {_rebuilt(table)} r"
        f" FULL JOIN (SELECT {live_cols} FROM {_live(table)}) l ON {_on('r', 'l', key)}"
        f" LEFT JOIN {_at_snapshot(table)} s ON {_on('s', 'l', key)}"
        f" WHERE r.{key[0]} IS NOT NULL OR l IS DISTINCT FROM s"
    )


def _compare(
    cur: Cursor,
    table: str,
    target: str,
    current: str,
    folded: int,
    totals: dict[str, dict[str, int]],
) -> TableReport:
    """The rows where `current` (a relation with analytics.`table`'s columns) differs from
    `target`, into temp table rebuild_diff_<table> (kind, the key, both rows as JSON)."""
    key, cols, diff = recompute.key(table), recompute.columns(table), f"rebuild_diff_{table}"
    keys = ", ".join(f"coalesce(l.{k}, r.{k}) AS {k}" for k in key)
    cur.execute(f"DROP TABLE IF EXISTS {diff}")
    cur.execute(
        f"CREATE TEMP TABLE {diff} AS"
        f" SELECT CASE WHEN l.{key[0]} IS NULL THEN 'missing'"
        f" WHEN r.{key[0]} IS NULL THEN 'extra' ELSE 'different' END AS kind, {keys},"
        " CASE WHEN l IS NULL THEN NULL ELSE to_jsonb(l) END AS live,"
        " CASE WHEN r IS NULL THEN NULL ELSE to_jsonb(r) END AS rebuilt"
        f" FROM (SELECT {cols} FROM {current}) l FULL JOIN (SELECT {cols} FROM {target}) r"
        f" ON {_on('l', 'r', key)}"
        " WHERE l IS DISTINCT FROM r"
    )
    cur.execute(f"SELECT kind, count(*) FROM {diff} GROUP BY kind")
    kinds = Counter({kind: int(n) for kind, n in cur.fetchall()})
    cur.execute(f"SELECT kind, live, rebuilt FROM {diff} ORDER BY {', '.join(key)} LIMIT {SAMPLES}")
    samples = [Difference(kind, live_row, new_row) for kind, live_row, new_row in cur.fetchall()]
    return TableReport(
        table=table,
        rows=sum(t["rows"] for t in totals.values()),
        missing=kinds["missing"],
        extra=kinds["extra"],
        different=kinds["different"],
        folded_since_snapshot=folded,
        totals=totals,
        samples=samples,
    )


def _counted(table: str) -> list[str]:
    """The counts and sums of `table`: every filled column but the key and COMBINE's."""
    key = recompute.key(table)
    return [c for c in recompute.names(table) if c not in key and c not in COMBINE]


def _totals(cur: Cursor, relation: str, table: str) -> dict[str, dict[str, int]]:
    """Per currency: the number of rows of `relation` and the sum of each counted column."""
    counted = _counted(table)
    sums = ", ".join(f"coalesce(sum({c}), 0)" for c in counted)
    cur.execute(f"SELECT currency, count(*), {sums} FROM {relation} GROUP BY currency")
    return {
        str(currency): {"rows": int(rows), **dict(zip(counted, map(int, values), strict=True))}
        for currency, rows, *values in cur.fetchall()
    }


def _check_consistent(totals: dict[str, dict[str, dict[str, int]]]) -> None:
    """The recomputed tables agree with each other per currency where they count the same
    events: product_sales is daily_product_sales summed over days; the customers' placements,
    cancellations and refunds are the days'."""
    pairs = [
        ("product_sales", "daily_product_sales", _counted("product_sales")),
        ("customer_sales", "daily_sales", list(SHARED_CUSTOMER_DAILY)),
    ]
    for one, other, columns in pairs:
        if one not in totals or other not in totals:
            continue
        a, b = (_project(totals[t], columns) for t in (one, other))
        if a != b:
            raise RebuildError(
                f"the recomputed {one} and {other} disagree per currency ({a} != {b}): nothing "
                "was changed"
            )


def _project(totals: dict[str, dict[str, int]], columns: list[str]) -> dict[str, dict[str, int]]:
    return {
        cur: {c: v[c] for c in columns} for cur, v in totals.items() if any(v[c] for c in columns)
    }


def _swap(cur: Cursor, table: str) -> TableReport:
    """Under the lock: build R_S + (L_now - L_S), make analytics.<table> equal it writing only
    the rows that differ, and verify."""
    live, result = _live(table), _result(table)
    key, cols = recompute.key(table), recompute.columns(table)
    _temp(cur, result, table, _combined(table))
    cur.execute(f"SELECT count(*) FILTER (WHERE folded) FROM {result}")
    folded = int(_one(cur))
    totals = _totals(cur, result, table)
    report = _compare(cur, table, result, live, folded, totals)
    diff = f"rebuild_diff_{table}"
    cur.execute(
        f"DELETE FROM {live} t USING {diff} d WHERE d.kind = 'extra' AND {_on('t', 'd', key)}"
    )
    sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in recompute.names(table) if c not in key)
    picked = ", ".join(f"r.{c}" for c in recompute.names(table))
    cur.execute(
        f"INSERT INTO {live} ({cols}) SELECT {picked} FROM {result} r JOIN {diff} d"
        f" ON {_on('r', 'd', key)} WHERE d.kind <> 'extra'"
        f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET {sets}"
    )
    _verify(cur, table, totals)
    return report


def _verify(cur: Cursor, table: str, result_totals: dict[str, dict[str, int]]) -> None:
    """After the swap, inside its transaction: analytics.<table> holds exactly the result's
    rows, so the same row count and sums per currency; otherwise RebuildError (rolled back)."""
    live, result, cols = _live(table), _result(table), recompute.columns(table)
    cur.execute(
        f"SELECT count(*) FROM (SELECT {cols} FROM {live}) l"
        f" FULL JOIN (SELECT {cols} FROM {result}) r ON {_on('l', 'r', recompute.key(table))}"
        " WHERE l IS DISTINCT FROM r"
    )
    unequal = _one(cur)
    live_totals = _totals(cur, live, table)
    if unequal or live_totals != result_totals:
        raise RebuildError(
            f"after the swap analytics.{table} differs from the rebuilt table ({unequal} rows; "
            f"totals {live_totals} != {result_totals}): rolled back, nothing was changed"
        )
