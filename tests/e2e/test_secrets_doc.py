"""docs/security.md's commands for the database passwords work as written on the running stack:
each line of the "use them" block, and the rotation of a role's password (the monitor's: only
the exporter restarts), after which the old password is refused and the new one logs in; the
local API key's rotation on a stand-in (another client and a key file of its own: on local-dev
each run would cut the life of the key the stack's users hold to an hour)."""

import stat
from pathlib import Path

import httpx
import psycopg
import pytest

from onceflow import paths
from onceflow.settings import Settings, get_settings
from services.ops.clients import revoke
from tests.e2e.doc_commands import assert_works, commands, run, section
from tests.integration.clients import new_client

SECURITY = (paths.ROOT / "docs" / "security.md").read_text()
WHERE = section(SECURITY, "Where each secret lives", 3).text
ROTATE = section(SECURITY, "Rotating a secret", 3).text
ROTATION = ".venv/bin/onceflow-stack rotate-db-password monitor"
KEY_ROTATION = "onceflow-ops clients rotate local-dev --overlap 1h"
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


def test_the_local_api_keys_rotation_works_as_written(settings: Settings, tmp_path: Path) -> None:
    (written,) = [c for c in commands(ROTATE) if KEY_ROTATION in c]
    stand_in = new_client(settings, name="rotated-doc")
    key_file = tmp_path / "api-key"
    key_file.write_text(stand_in.key + "\n")
    pasted = written.replace(" local-dev ", f" {stand_in.name} ").replace(
        ".stack/secrets/api-key", str(key_file)
    )
    try:
        result = run(pasted, timeout=60)
        assert result.returncode == 0, str(result)
        new = key_file.read_text().strip()
        assert new.startswith("of_")
        assert new != stand_in.key
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        api = f"http://{settings.api_host}:{settings.api_port}/orders"
        for key in (new, stand_in.key):  # the old key too, within its hour of overlap
            answer = httpx.get(api, headers={"Authorization": f"Bearer {key}"}, timeout=30)
            assert answer.status_code == 200, answer.text
    finally:
        revoke(settings=settings, client_id=stand_in.client_id)
