"""One maintenance run: every task, under an advisory lock so that only one runs at a time."""

import logging
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import psycopg

from onceflow.settings import Settings
from services.maintenance import metrics
from services.maintenance.tasks import TASKS, Windows

log = logging.getLogger("onceflow.maintenance")
APP_NAME = "onceflow-maintenance"
LOCK_KEY = 0x0F1CEF11  # pg_try_advisory_lock key: one maintenance run in the whole deployment


@dataclass(frozen=True)
class Removed:
    """What one task removed (or, in a dry run, would remove)."""

    task: str
    rows: int


def run_once(
    *, settings: Settings, windows: Windows, batch: int, dry_run: bool = False
) -> list[Removed] | None:
    """Run every task; None when another run holds the lock (then nothing is done)."""
    with ExitStack() as stack:
        conns: dict[str, psycopg.Connection[Any]] = {}
        for role in sorted({task.role for task in TASKS}):
            conns[role] = stack.enter_context(
                psycopg.connect(
                    settings.dsn(role), autocommit=True, application_name="onceflow-maintenance"
                )
            )
        lock = conns["app"].execute("SELECT pg_try_advisory_lock(%s)", (LOCK_KEY,)).fetchone()
        if lock != (True,):
            log.info("another maintenance run holds the lock: skipped")
            metrics.RUNS.labels("skipped").inc()
            return None
        results = []
        for task in TASKS:
            conn = conns[task.role]
            rows = task.count(conn, windows) if dry_run else task.run(conn, windows, batch=batch)
            results.append(Removed(task.name, rows))
            if not dry_run:
                metrics.REMOVED.labels(task.name).inc(rows)
                log.info(
                    "%s: removed %d", task.name, rows, extra={"task": task.name, "removed": rows}
                )
        if not dry_run:
            metrics.RUNS.labels("done").inc()
            metrics.LAST_SUCCESS.set_to_current_time()
        return results
