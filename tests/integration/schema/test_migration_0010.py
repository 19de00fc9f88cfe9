"""Migration 0010 adds the job's staging area (analytics.staged_records, in schema aggregation
since migration 0018) as an UNLOGGED table
with its index, that the job's group may only read, insert into and delete from (maintenance's:
read and delete; analysts: nothing), and downgrades cleanly (upgrading again restores it all)."""

import psycopg
import pytest

from onceflow.settings import Settings
from tests.integration.databases import alembic

pytestmark = pytest.mark.integration
# Every relation of the staging area (tables, indexes, ...): kind and persistence.
RELATIONS = (
    "SELECT relname, relkind, relpersistence FROM pg_class"
    " WHERE relnamespace::regnamespace::text IN ('analytics', 'aggregation')"
    " AND relname LIKE 'staged%' ORDER BY 1"
)
# Who holds what on the staging area, but its owner.
PRIVILEGES = (
    "SELECT a.grantee::regrole::text, a.privilege_type"
    " FROM pg_class c, aclexplode(c.relacl) a"
    " WHERE c.oid = to_regclass('aggregation.staged_records') AND a.grantee <> c.relowner"
    " ORDER BY 1, 2"
)
AREA = [("staged_records", "r", "u"), ("staged_records_by_batch", "i", "u")]
# The job's group, and maintenance's, which prunes it (migration 0021).
JOB = [
    ("onceflow_maintenance", "DELETE"),
    ("onceflow_maintenance", "SELECT"),
    *[("onceflow_spark", p) for p in ("DELETE", "INSERT", "SELECT")],
]


def _query(settings: Settings, sql: str) -> list[tuple[str, ...]]:
    with psycopg.connect(settings.dsn("owner")) as conn:
        return [tuple(str(v) for v in row) for row in conn.execute(sql).fetchall()]


def test_the_staging_area_is_unlogged_and_goes_with_a_downgrade(fresh: Settings) -> None:
    assert _query(fresh, RELATIONS) == AREA
    assert _query(fresh, PRIVILEGES) == JOB
    down = alembic(fresh.pg_database, "downgrade", "0009_journey")
    assert down.returncode == 0, down.stderr
    assert _query(fresh, RELATIONS) == []
    up = alembic(fresh.pg_database, "upgrade", "head")
    assert up.returncode == 0, up.stderr
    assert _query(fresh, RELATIONS) == AREA
    assert _query(fresh, PRIVILEGES) == JOB
    check = alembic(fresh.pg_database, "check")
    assert check.returncode == 0, check.stdout + check.stderr
