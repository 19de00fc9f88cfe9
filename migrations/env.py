"""Alembic environment: migrations run as the schema-owner role from services.config."""

from logging.config import fileConfig

from alembic import context
from sqlalchemy import create_engine

from services.config import get_settings

if context.config.config_file_name is not None:
    fileConfig(context.config.config_file_name)


def _url() -> str:
    return get_settings().dsn("owner").replace("postgresql://", "postgresql+psycopg://", 1)


def run_migrations_offline() -> None:
    context.configure(url=_url(), literal_binds=True, transactional_ddl=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = create_engine(_url())
    with engine.connect() as connection:
        context.configure(connection=connection, transactional_ddl=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
