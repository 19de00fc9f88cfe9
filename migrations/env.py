"""Alembic environment: migrations run as the schema-owner role; the target is onceflow.schema.

`alembic check` compares the migrated database with onceflow.schema.metadata (make test runs
it), limited to the schemas Onceflow owns.
"""

from logging.config import fileConfig
from typing import Any

from alembic import context
from sqlalchemy import create_engine

from onceflow.schema import SCHEMAS, metadata
from onceflow.settings import get_settings

if context.config.config_file_name is not None:
    fileConfig(context.config.config_file_name)


def _url() -> str:
    return get_settings().dsn("owner").replace("postgresql://", "postgresql+psycopg://", 1)


def _ours(name: str | None, type_: str, _parent: Any) -> bool:
    if type_ == "schema":
        return name in SCHEMAS
    # Partitions of the de-duplication set come and go at run time (dedup.sql).
    return not (type_ == "table" and (name or "").startswith("applied_events_"))


OPTIONS: dict[str, Any] = {
    "target_metadata": metadata,
    "include_schemas": True,
    "include_name": _ours,
    "compare_server_default": True,
    "transactional_ddl": True,
}


def run_migrations_offline() -> None:
    context.configure(url=_url(), literal_binds=True, **OPTIONS)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = create_engine(_url())
    with engine.connect() as connection:
        context.configure(connection=connection, **OPTIONS)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
