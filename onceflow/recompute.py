"""Recomputing the reporting tables from the events the job counted, as far as the database still
knows them (onceflow/sql/recompute/, docs/analytics.md "Recomputing the tables"). Shared by
migration 0015 and `onceflow-ops analytics rebuild` (services/ops/analytics_rebuild.py).

`prepare(execute, bookkeeping)` materialises those events as temp table recompute_events
(events.sql, dropped at commit), reading the job's de-duplication set and order_state in schema
`bookkeeping`; `query(table)` is then the SELECT of that table's rows, named as its columns.
"""

from collections.abc import Callable
from pathlib import Path

from onceflow.schema import metadata

FOLDER = Path(__file__).resolve().parent / "sql" / "recompute"
EVENTS = "recompute_events"
TABLES = ("daily_sales", "customer_sales", "product_sales", "daily_product_sales")


def _text(name: str, bookkeeping: str) -> str:
    return (
        (FOLDER / f"{name}.sql")
        .read_text()
        .format(
            applied_events=f"{bookkeeping}.applied_events", order_state=f"{bookkeeping}.order_state"
        )
    )


def prepare(execute: Callable[[str], object], bookkeeping: str) -> None:
    """Create temp table recompute_events for this transaction, from the job's bookkeeping in
    schema `bookkeeping` (analytics before migration 0018 moved it)."""
    execute(f"CREATE TEMP TABLE {EVENTS} ON COMMIT DROP AS {_text('events', bookkeeping)}")
    execute(f"ANALYZE {EVENTS}")


def order_state(bookkeeping: str) -> str:
    """The UPDATE that sets order_state's paid and cancelled_at from recompute_events."""
    return _text("order_state", bookkeeping)


def query(table: str) -> str:
    """The SELECT of `table`'s recomputed rows (reads recompute_events; product_sales.sql sums
    daily_product_sales.sql's, in place of its {daily_product_sales})."""
    text = (FOLDER / f"{table}.sql").read_text()
    if table == "product_sales":
        return text.format(daily_product_sales=query("daily_product_sales"))
    return text


def columns(table: str) -> str:
    """The columns of analytics.`table` a recompute fills (all but the computed ones)."""
    return ", ".join(names(table))


def names(table: str) -> list[str]:
    """The column names of analytics.`table` a recompute fills, in the table's order."""
    return [c.name for c in metadata.tables[f"analytics.{table}"].columns if c.computed is None]


def key(table: str) -> list[str]:
    """The primary key columns of analytics.`table`."""
    return [c.name for c in metadata.tables[f"analytics.{table}"].primary_key.columns]


def fill(execute: Callable[[str], object], table: str, target: str) -> None:
    """Insert `table`'s recomputed rows into `target` (a table with `table`'s columns)."""
    cols = columns(table)
    execute(f"INSERT INTO {target} ({cols}) SELECT {cols} FROM ({query(table)}) r")
