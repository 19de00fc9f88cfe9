"""What maintenance removes: each task deletes rows older than its window, in small batches."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

import psycopg

from onceflow.settings import RetentionSettings

SQL = Path(__file__).parent / "sql"
_COUNT_DEDUP = (SQL / "count_dedup.sql").read_text()


@dataclass(frozen=True)
class Windows:
    """How long each kind of state is kept, and the width of the id set's partitions."""

    idempotency_keys: timedelta
    dedup: timedelta
    dedup_partition: timedelta = timedelta(days=1)
    staged: timedelta = timedelta(hours=6)

    @classmethod
    def of(cls, retention: RetentionSettings) -> "Windows":
        """The windows the settings configure."""
        return cls(
            idempotency_keys=retention.idempotency_retention,
            dedup=retention.dedup_window,
            dedup_partition=retention.dedup_partition,
            staged=retention.staged_retention,
        )


class Task(Protocol):
    """One kind of state maintenance keeps bounded, worked on as database role `role`."""

    @property
    def name(self) -> str:
        """The task's name in logs, metrics and `onceflow-ops maintenance`."""
        ...

    @property
    def role(self) -> str:
        """The database role it connects as."""
        ...

    def run(self, conn: psycopg.Connection[Any], windows: Windows, *, batch: int) -> int:
        """Remove what is past its window; return how much went."""
        ...

    def count(self, conn: psycopg.Connection[Any], windows: Windows) -> int:
        """How much a run would remove now."""
        ...


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


@dataclass(frozen=True)
class RollDedup:
    """The job's set of remembered event ids (migrations/sql/analytics/dedup.sql): partitions
    of the configured width created ahead, those that ended before the window dropped."""

    name: str = "dedup_ids"
    role: str = "maintenance"

    def run(self, conn: psycopg.Connection[Any], windows: Windows, *, batch: int) -> int:
        """Forget the ids of the partitions past the window; return how many were forgotten."""
        del batch  # partitions are dropped whole: forgetting is never a DELETE
        width = windows.dedup_partition
        conn.execute("SELECT aggregation.dedup_set_width(%s)", (width,))
        conn.execute(
            "SELECT aggregation.dedup_cover(ARRAY(SELECT generate_series("
            "aggregation.dedup_bucket(now()), now() + 2 * %(w)s::interval, %(w)s::interval)))",
            {"w": width},
        )
        row = conn.execute(
            "SELECT coalesce(sum(ids), 0) FROM aggregation.dedup_forget(now() - %s::interval)",
            (windows.dedup,),
        ).fetchone()
        return int(row[0]) if row else 0

    def count(self, conn: psycopg.Connection[Any], windows: Windows) -> int:
        """How many ids a run would forget now."""
        row = conn.execute(_COUNT_DEDUP, {"keep": windows.dedup})
        found = row.fetchone()
        return int(found[0]) if found else 0


TASKS: tuple[Task, ...] = (
    _prune("idempotency_keys", "app", lambda w: w.idempotency_keys),
    # The job's bookkeeping, as maintenance's own role (not the job's: migration 0021).
    _prune("ledger", "maintenance", lambda w: w.dedup),
    _prune("late_events", "maintenance", lambda w: w.dedup),
    _prune("staged_records", "maintenance", lambda w: w.staged),
    RollDedup(),
)
