"""Each migration grants what it granted when it was written, replayed on an empty database:
up to 0019 the ledger's readers (0020) and maintenance (0021) hold nothing and schema reconcile
is the job's role's (0017); 0020 gives the readers theirs and takes reconcile from the job's
role; 0021 gives maintenance its own. Downgrading to 0019 and upgrading again gives back each
revision's privileges exactly."""

from collections.abc import Iterator

import psycopg
import pytest

from onceflow.settings import Settings
from tests.integration.databases import alembic
from tests.integration.schema.scratch import scratch_database

pytestmark = pytest.mark.integration

READERS = ("onceflow_observer", "onceflow_reconcile")
MAINTENANCE = "onceflow_maintenance"
JOB = "onceflow_spark"
# Every privilege a group holds on a schema, relation, function or this database:
# (group, kind, object, privilege).
PRIVILEGES = """
WITH acl(kind, object, item) AS (
    SELECT 'schema', nspname, aclexplode(nspacl) FROM pg_namespace
    UNION ALL
    SELECT 'relation', oid::regclass::text, aclexplode(relacl) FROM pg_class
    UNION ALL
    SELECT 'function', oid::regprocedure::text, aclexplode(proacl) FROM pg_proc
    UNION ALL
    SELECT 'database', datname, aclexplode(datacl) FROM pg_database
    WHERE datname = current_database()
)
SELECT (item).grantee::regrole::text, kind, object, (item).privilege_type FROM acl
WHERE (item).grantee <> 0 AND (item).grantee::regrole::text LIKE 'onceflow\\_%'
ORDER BY 1, 2, 3, 4
"""

Privilege = tuple[str, str, str, str]


@pytest.fixture
def empty() -> Iterator[Settings]:
    """Roles and a database with no migration applied yet."""
    with scratch_database("test_grants", None) as settings:
        yield settings


def _migrate(settings: Settings, *args: str) -> set[Privilege]:
    done = alembic(settings.pg_database, *args)
    assert done.returncode == 0, done.stderr
    with psycopg.connect(settings.dsn("owner")) as conn:
        return {(g, k, o, p) for g, k, o, p in conn.execute(PRIVILEGES).fetchall()}


def _held_by(privileges: set[Privilege], *groups: str) -> set[Privilege]:
    return {p for p in privileges if p[0] in groups}


def _on_reconcile(privileges: set[Privilege], group: str) -> set[Privilege]:
    return {
        p
        for p in privileges
        if p[0] == group and (p[2] == "reconcile" or p[2].startswith("reconcile."))
    }


def test_each_migration_grants_what_it_did_when_written(empty: Settings) -> None:
    at_0019 = _migrate(empty, "upgrade", "0019_executors_stage_role")
    assert _held_by(at_0019, *READERS, MAINTENANCE) == set()
    assert (JOB, "schema", "reconcile", "USAGE") in at_0019
    assert (JOB, "relation", "reconcile.runs", "INSERT") in at_0019

    at_0020 = _migrate(empty, "upgrade", "0020_ledger_readers")
    assert _held_by(at_0020, MAINTENANCE) == set()
    assert _on_reconcile(at_0020, JOB) == set()
    assert ("onceflow_observer", "relation", "aggregation.applied_batches", "SELECT") in at_0020
    assert ("onceflow_reconcile", "schema", "reconcile", "USAGE") in at_0020
    assert ("onceflow_reconcile", "database", empty.pg_database, "TEMPORARY") in at_0020
    # 0020 changes only the readers' privileges and the job's on schema reconcile.
    unchanged = _held_by(at_0019, *READERS) | _on_reconcile(at_0019, JOB)
    assert at_0019 - unchanged == at_0020 - _held_by(at_0020, *READERS)

    at_0021 = _migrate(empty, "upgrade", "0021_maintenance_role")
    assert (MAINTENANCE, "relation", "aggregation.applied_batches", "DELETE") in at_0021
    forget = "aggregation.dedup_forget(timestamp with time zone)"
    assert (MAINTENANCE, "function", forget, "EXECUTE") in at_0021
    assert at_0021 - _held_by(at_0021, MAINTENANCE) == at_0020

    assert _migrate(empty, "downgrade", "0019_executors_stage_role") == at_0019
    assert _migrate(empty, "upgrade", "0021_maintenance_role") == at_0021
    _migrate(empty, "upgrade", "head")
    check = alembic(empty.pg_database, "check")
    assert check.returncode == 0, check.stdout + check.stderr
