"""A scratch database for one test module: roles, a new database, the migrations up to a
revision; dropped on leaving."""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from onceflow.settings import Settings, get_settings
from stack import postgres
from tests.integration.databases import alembic, drop_database


@contextmanager
def scratch_database(prefix: str, revision: str | None = "head") -> Iterator[Settings]:
    """`prefix_<random>` provisioned as `make up` does, migrated to `revision` (None: no
    migration at all)."""
    database = f"{prefix}_{uuid.uuid4().hex[:8]}"
    settings = get_settings().model_copy(update={"pg_database": database})
    try:
        postgres.ensure_roles_and_database(settings)
        if revision is not None:
            migrated = alembic(database, "upgrade", revision)
            assert migrated.returncode == 0, migrated.stderr
        yield settings
    finally:
        drop_database(database)
