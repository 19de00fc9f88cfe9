"""docs/security.md's commands for the database passwords work as written on the running stack:
each line of the "use them" block, and the rotation of a role's password (the monitor's: only
the exporter restarts), after which the old password is refused and the new one logs in. The
API key's rotation is not run here (each run would issue the local client another key)."""

import psycopg
import pytest

from onceflow import paths
from onceflow.settings import get_settings
from tests.e2e.doc_commands import assert_works, commands, run, section

SECURITY = (paths.ROOT / "docs" / "security.md").read_text()
WHERE = section(SECURITY, "Where each secret lives", 3).text
ROTATE = section(SECURITY, "Rotating a secret", 3).text
ROTATION = ".venv/bin/onceflow-stack rotate-db-password monitor"
# command -> what its stdout must match (MULTILINE)
USES = {
    "psql postgresql://analyst:analyst@127.0.0.1:5432/shop -c 'SELECT count(*) FROM daily_sales'": (
        r"^\s+\d+$"
    ),
    'psql "postgresql://shop_monitor:$(cat .stack/secrets/postgres/monitor)@127.0.0.1:5432/shop"'
    " -c 'SELECT 1'": r"^\s+1$",
}


def test_every_use_has_a_check() -> None:
    assert set(commands(WHERE)) == set(USES)


@pytest.mark.parametrize("command", list(USES))
def test_a_use_works_as_written(command: str) -> None:
    assert_works(run(command, timeout=30), USES[command])


def test_a_rotation_works_as_written() -> None:
    assert ROTATION in commands(ROTATE)
    settings = get_settings()
    before = settings.dsn("monitor")
    assert_works(run(ROTATION, timeout=120), r"^postgres-exporter: restarting$")
    assert settings.dsn("monitor") != before
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(before, connect_timeout=10).close()
    with psycopg.connect(settings.dsn("monitor"), connect_timeout=10) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
