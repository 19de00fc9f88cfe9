"""The privileges' one home is migrations/sql/grants.sql and, for the groups a migration added
without creating anything their blocks could be guarded by, one file per such migration. Every
block of grants.sql is idempotent and guarded by what exists, so a migration that adds a group
role's privileges runs grants.sql again, with the files of the migrations up to its own: replaying
a migration on a fresh database applies what it applied when it was written. A downgrade runs a
file of revocations. Each runs under a short lock timeout (grants take a moment's catalog lock;
waiting behind a long transaction must fail, not stall every reader)."""

from pathlib import Path
from typing import Any

SQL = Path(__file__).resolve().parent / "sql"
LOCK_TIMEOUT = "SET LOCAL lock_timeout = '10s'"
# The migrations whose grants have no object of their own to be guarded by, and their files
# (frozen as their migration wrote them). Revision ids compare as strings: keep them
# zero-padded to four digits.
SINCE = (
    ("0020_ledger_readers", "ledger_readers.sql"),
    ("0021_maintenance_role", "maintenance_role.sql"),
)


def grant_again(op: Any, revision: str) -> None:
    """Run grants.sql again, then the files of the migrations up to `revision` (the one
    upgraded to, or the one a downgrade goes back to)."""
    run(op, "grants.sql")
    for since, name in SINCE:
        if since <= revision:
            run(op, name)


def run(op: Any, name: str) -> None:
    """Run migrations/sql/<name> under the lock timeout."""
    op.execute(LOCK_TIMEOUT)
    op.execute((SQL / name).read_text())
