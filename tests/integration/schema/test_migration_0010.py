"""Migration 0010 adds the job's staging area as UNLOGGED tables, and downgrades cleanly."""

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from onceflow.settings import Settings
from tests.integration.databases import alembic, create_database, drop_database

pytestmark = pytest.mark.integration
PERSISTENCE = (
    "SELECT relname, relpersistence FROM pg_class WHERE relnamespace = 'analytics'::regnamespace"
    " AND relname LIKE 'staged%' AND relkind = 'r' ORDER BY 1"
)


@pytest.fixture
def fresh() -> Iterator[Settings]:
    database = f"test_0010_{uuid.uuid4().hex[:8]}"
    try:
        yield create_database(database)
    finally:
        drop_database(database)


def _staged(settings: Settings) -> list[tuple[str, str]]:
    with psycopg.connect(settings.dsn("owner")) as conn:
        return [(str(name), str(p)) for name, p in conn.execute(PERSISTENCE).fetchall()]


def test_the_staging_area_is_unlogged_and_goes_with_a_downgrade(fresh: Settings) -> None:
    unlogged = [("staged_dead_letters", "u"), ("staged_events", "u")]
    assert _staged(fresh) == unlogged
    down = alembic(fresh.pg_database, "downgrade", "0009_journey")
    assert down.returncode == 0, down.stderr
    assert _staged(fresh) == []
    up = alembic(fresh.pg_database, "upgrade", "head")
    assert up.returncode == 0, up.stderr
    assert _staged(fresh) == unlogged
    check = alembic(fresh.pg_database, "check")
    assert check.returncode == 0, check.stdout + check.stderr
