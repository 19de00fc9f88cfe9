"""Scratch databases on the stack's cluster: created, provisioned and migrated, then dropped."""

import os
import subprocess
import sys

import psycopg

from onceflow.paths import MIGRATIONS_INI, ROOT
from onceflow.settings import Settings, get_settings
from stack import postgres


def alembic(database: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run an alembic command against `database`; the caller checks the result."""
    return subprocess.run(
        [sys.executable, "-m", "alembic", "-c", str(MIGRATIONS_INI), *args],
        cwd=ROOT,
        env={**os.environ, "ONCEFLOW_PG_DATABASE": database},
        capture_output=True,
        text=True,
        check=False,
    )


def create_database(database: str) -> Settings:
    """Roles, a new database and every migration: what `make up` provisions, in `database`."""
    settings = get_settings().model_copy(update={"pg_database": database})
    postgres.ensure_roles_and_database(settings)
    migrated = alembic(database, "upgrade", "head")
    assert migrated.returncode == 0, migrated.stderr
    return settings


def drop_database(database: str) -> None:
    """Drop `database`, disconnecting whoever still uses it."""
    with psycopg.connect(postgres.superuser_conninfo(get_settings()), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
