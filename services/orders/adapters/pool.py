"""The process's psycopg connection pool (autocommit connections; transactions are explicit)."""

from typing import TypeAlias

import psycopg
from psycopg_pool import AsyncConnectionPool

from onceflow.settings import ApiSettings, Settings

Connection: TypeAlias = psycopg.AsyncConnection[tuple[object, ...]]
Pool: TypeAlias = AsyncConnectionPool[Connection]


def make_pool(settings: Settings, api: ApiSettings) -> Pool:
    """A fixed-size pool as the API role; opened by the app's lifespan."""
    return AsyncConnectionPool(
        settings.dsn("app"),
        min_size=api.api_pool_size,
        max_size=api.api_pool_size,
        timeout=api.api_pool_timeout_s,
        kwargs={
            "autocommit": True,
            "application_name": "onceflow-api",
            "connect_timeout": api.api_pg_connect_timeout_s,
            "tcp_user_timeout": api.api_pg_tcp_user_timeout_ms,
            "options": f"-c statement_timeout={api.api_pg_statement_timeout_ms}",
            "keepalives": 1,
            "keepalives_idle": 1,
            "keepalives_interval": 1,
        },
        open=False,
        name="orders",
    )
