"""Recomputing analytics tables from the events the job counted, as far as the database still
knows them (migrations/sql/analytics/recompute/, docs/analytics.md "Recomputing the tables").

`prepare(execute)` materialises those events as temp table recompute_events (events.sql, dropped
at commit); `query(table)` is then the SELECT of that table's rows, named as its columns.
"""

from collections.abc import Callable
from pathlib import Path

from onceflow.schema import metadata

FOLDER = Path(__file__).resolve().parent / "sql" / "analytics" / "recompute"
EVENTS = "recompute_events"
TABLES = ("daily_sales", "customer_sales", "product_sales", "daily_product_sales")


def prepare(execute: Callable[[str], object]) -> None:
    """Create temp table recompute_events for this transaction."""
    events = (FOLDER / "events.sql").read_text()
    execute(f"CREATE TEMP TABLE {EVENTS} ON COMMIT DROP AS {events}")
    execute(f"ANALYZE {EVENTS}")


def query(table: str) -> str:
    """The SELECT of `table`'s recomputed rows (reads recompute_events; product_sales.sql sums
    daily_product_sales.sql's, in place of its {daily_product_sales})."""
    text = (FOLDER / f"{table}.sql").read_text()
    if table == "product_sales":
        return text.format(daily_product_sales=query("daily_product_sales"))
    return text


def columns(table: str) -> str:
    """The columns of analytics.`table` a recompute fills (all but the computed ones)."""
    return ", ".join(
        c.name for c in metadata.tables[f"analytics.{table}"].columns if c.computed is None
    )


def fill(execute: Callable[[str], object], table: str, target: str) -> None:
    """Insert `table`'s recomputed rows into `target` (a table with `table`'s columns)."""
    names = columns(table)
    execute(f"INSERT INTO {target} ({names}) SELECT {names} FROM ({query(table)}) r")
