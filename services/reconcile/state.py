"""The reconciliation's state as its last reports say it (schema reconcile): what the metrics,
`onceflow-ops overview` and the dashboard show."""

from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import psycopg

from onceflow.settings import Settings

SQL = Path(__file__).parent / "sql"


@dataclass(frozen=True)
class State:
    """Differences open (each day's last result), days with any, and the last run."""

    differences: int
    days_with_differences: int
    last_run_at: datetime | None
    days_checked: int | None
    records_read: int | None
    note: str | None
    first_day: date | None
    last_day: date | None


def read(conn: psycopg.Connection[Any]) -> State:
    """The state, in one query."""
    row = conn.execute((SQL / "state.sql").read_text()).fetchone()
    assert row is not None  # the query always returns one row
    return State(*row)


def current(settings: Settings, *, role: str = "observer", timeout_s: int = 3) -> State:
    """The state, read as `role`: the ledger's readers' (the dashboard, onceflow-ops) by
    default; the reconciler's own (`reconcile`) in the maintenance process."""
    with psycopg.connect(settings.dsn(role), connect_timeout=timeout_s) as conn:
        return read(conn)
