"""The privileges' one home is migrations/sql/grants.sql: every block is idempotent and guarded by
what exists, so a migration that adds a group role's privileges runs the whole file again, and
its downgrade runs a file of revocations, each under a short lock timeout (grants take a moment's
catalog lock; waiting behind a long transaction must fail, not stall every reader)."""

from pathlib import Path
from typing import Any

SQL = Path(__file__).resolve().parent / "sql"
LOCK_TIMEOUT = "SET LOCAL lock_timeout = '10s'"


def grant_again(op: Any) -> None:
    """Run grants.sql again."""
    run(op, "grants.sql")


def run(op: Any, name: str) -> None:
    """Run migrations/sql/<name> under the lock timeout."""
    op.execute(LOCK_TIMEOUT)
    op.execute((SQL / name).read_text())
