"""A lock held by one session while another's request runs into it."""

import time
from concurrent.futures import Future, wait
from typing import Any, TypeVar

import psycopg

T = TypeVar("T")
Conn = psycopg.Connection[tuple[Any, ...]]


def blocked_by(watcher: Conn, pid: int) -> bool:
    """True when some backend waits for a lock the backend `pid` holds."""
    row = watcher.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY (pg_blocking_pids(pid))", (pid,)
    ).fetchone()
    return bool(row and row[0])


def answered_while_held(
    pending: Future[T], holder: Conn, watcher: Conn, held_s: float
) -> tuple[bool, T]:
    """Once `pending` waits for a lock of `holder`'s transaction (or is answered), keep the lock
    `held_s` longer, then roll `holder` back: (was `pending` answered before that, its result).
    `watcher` is an autocommit connection that may read pg_stat_activity."""
    deadline = time.monotonic() + 10
    while not pending.done() and not blocked_by(watcher, holder.info.backend_pid):
        assert time.monotonic() < deadline, "the request never reached the held lock"
        time.sleep(0.01)
    wait([pending], timeout=held_s)
    answered = pending.done()
    holder.rollback()
    return answered, pending.result(timeout=30)
