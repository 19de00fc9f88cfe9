"""What maintenance removes: each task deletes rows older than its window, in small batches."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg

from onceflow.settings import RetentionSettings

SQL = Path(__file__).parent / "sql"


@dataclass(frozen=True)
class Windows:
    """How long each kind of state is kept."""

    idempotency_keys: timedelta
    dedup: timedelta

    @classmethod
    def of(cls, retention: RetentionSettings) -> "Windows":
        """The windows the settings configure."""
        return cls(idempotency_keys=retention.idempotency_retention, dedup=retention.dedup_window)


@dataclass(frozen=True)
class Prune:
    """Delete rows older than `keep(windows)` as database role `role`: delete_sql removes one
    batch, count_sql says how many would go."""

    name: str
    role: str
    keep: Callable[[Windows], timedelta]
    delete_sql: str
    count_sql: str

    def run(self, conn: psycopg.Connection[Any], windows: Windows, *, batch: int) -> int:
        """Delete in autocommitted batches until none is left; return how many went."""
        params = {"keep": self.keep(windows), "batch": batch}
        removed = 0
        while (deleted := conn.execute(self.delete_sql, params).rowcount) > 0:
            removed += deleted
        return removed

    def count(self, conn: psycopg.Connection[Any], windows: Windows) -> int:
        """How many rows a run would delete now."""
        row = conn.execute(self.count_sql, {"keep": self.keep(windows)}).fetchone()
        return int(row[0]) if row else 0


def _prune(name: str, role: str, keep: Callable[[Windows], timedelta]) -> Prune:
    return Prune(
        name,
        role,
        keep,
        (SQL / f"prune_{name}.sql").read_text(),
        (SQL / f"count_{name}.sql").read_text(),
    )


TASKS = (
    _prune("idempotency_keys", "app", lambda w: w.idempotency_keys),
    _prune("ledger", "spark", lambda w: w.dedup),
)
