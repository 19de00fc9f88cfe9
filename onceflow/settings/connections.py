"""Addresses, names and credentials of the pipeline's components (every process uses them).

A database role's password is `ONCEFLOW_<ROLE>_DB_PASSWORD` when set (compose, production),
else the local stack's file `.stack/secrets/postgres/<role>` (mode 0600, generated once by
`make up`: stack/db_secrets.py). There is no default: a process that needs a password it has
neither way stops with DbPasswordMissingError naming both (docs/security.md).
"""

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Self
from urllib.parse import quote

from pydantic import SecretStr, field_validator, model_validator
from pydantic_settings import NoDecode

from onceflow import paths
from onceflow.settings.secrets import given_or_file
from onceflow.settings.topology import TopologySettings
from onceflow.topology import SINGLE

# The local stack's database passwords, one file per role (named as in ROLES), mode 0600.
LOCAL_DB_PASSWORDS = paths.SECRETS / "postgres"
# The database roles of the settings: `<role>_db_user` and `<role>_db_password` each.
ROLES = (
    "owner",
    "app",
    "cdc",
    "spark",
    "spark_stage",
    "observer",
    "reconcile",
    "maintenance",
    "analyst",
    "monitor",
)


class DbPasswordMissingError(RuntimeError):
    """A role's password is neither in the environment nor in the local stack's file."""


class Settings(TopologySettings):
    """Addresses, names and credentials of the pipeline's components."""

    pg_host: str = "127.0.0.1"
    pg_port: int = 5432
    pg_database: str = "shop"

    # Only for provisioning (roles, database, slot). Unset locally: the stack then uses the
    # cluster's private Unix socket with peer authentication.
    superuser_dsn: SecretStr | None = None

    # Passwords: no default (the module's docstring says where they come from).
    owner_db_user: str = "shop_owner"
    owner_db_password: SecretStr | None = None
    app_db_user: str = "shop_app"
    app_db_password: SecretStr | None = None
    cdc_db_user: str = "shop_cdc"
    cdc_db_password: SecretStr | None = None
    # The job's driver: the ledger, the analytics tables, the staging area's reads and deletes.
    spark_db_user: str = "shop_spark"
    spark_db_password: SecretStr | None = None
    # The job's executors: INSERT into the staging area, nothing else (migration 0019).
    spark_stage_db_user: str = "shop_spark_stage"
    spark_stage_db_password: SecretStr | None = None
    # Who reads the job's ledger without writing it (migration 0020): the dashboard and
    # onceflow-ops (how far the job got, an order's journey, the reconciliation's reports).
    observer_db_user: str = "shop_observer"
    observer_db_password: SecretStr | None = None
    # The reconciler: writes schema reconcile, reads analytics.daily_sales and the ledger's
    # positions (migration 0020).
    reconcile_db_user: str = "shop_reconcile"
    reconcile_db_password: SecretStr | None = None
    # The maintenance process's prunes of the job's bookkeeping: delete what is past its window
    # from the ledger, the late events and the staging area, roll the de-duplication set's
    # partitions (migration 0021); no insert or update anywhere.
    maintenance_db_user: str = "shop_maintenance"
    maintenance_db_password: SecretStr | None = None
    analyst_db_user: str = "analyst"
    analyst_db_password: SecretStr | None = None
    # prometheus-postgres-exporter: member of pg_monitor only, no access to any table's rows.
    monitor_db_user: str = "shop_monitor"
    monitor_db_password: SecretStr | None = None
    # Where the local stack's password files are (one per role).
    db_password_dir: Path = LOCAL_DB_PASSWORDS

    replication_slot: str = "onceflow_outbox"
    # Postgres' cap on the WAL one slot may hold back. Past it the slot is lost (a loud failure,
    # docs/operations.md) rather than the database's disk filling up.
    pg_max_slot_wal_keep_size: str = "2GB"

    # Default: every Kafka node and the first Connect worker of the topology.
    kafka_bootstrap: str = SINGLE.bootstrap
    connect_url: str = SINGLE.connect_url
    # Every Connect worker, for what must hear each one (the connect watchdog: a worker cut off
    # from the brokers answers with a stale status). `URL,URL`. Default: connect_url, then the
    # topology's other workers when it is one of them.
    connect_urls: Annotated[tuple[str, ...], NoDecode] = (SINGLE.connect_url,)
    connector_name: str = "orders-outbox"
    topic: str = "outbox.event.order"

    api_host: str = "127.0.0.1"
    api_port: int = 8000

    @model_validator(mode="after")
    def _follow_topology(self) -> Self:
        nodes = self.layout
        self.default(kafka_bootstrap=nodes.bootstrap, connect_url=nodes.connect_url)
        workers = [worker.url for worker in nodes.connect]
        if self.connect_url in workers:
            workers.remove(self.connect_url)
            self.default(connect_urls=(self.connect_url, *workers))
        else:
            self.default(connect_urls=(self.connect_url,))
        return self

    @field_validator("connect_urls", mode="before")
    @classmethod
    def _split_urls(cls, value: object) -> object:
        """Accept `URL,URL` as well as a sequence; at least one URL."""
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, list | tuple) and not value:
            raise ValueError("ONCEFLOW_CONNECT_URLS names no Connect worker")
        return value

    def dsn(self, role: str) -> str:
        """Return a libpq URI for one of the ROLES."""
        user, password = self.credentials(role)
        return (
            f"postgresql://{quote(user, safe='')}:{quote(password, safe='')}"
            f"@{self.pg_host}:{self.pg_port}/{self.pg_database}"
        )

    def jdbc_url(self) -> str:
        """The database's JDBC URL, without credentials (Spark's JDBC writer: credentials()).
        stringtype=unspecified lets Postgres type the text Spark sends (uuid, jsonb)."""
        return (
            f"jdbc:postgresql://{self.pg_host}:{self.pg_port}/{quote(self.pg_database)}"
            "?stringtype=unspecified&reWriteBatchedInserts=true"
        )

    def credentials(self, role: str) -> tuple[str, str]:
        """(user, password) of one of the ROLES; DbPasswordMissingError without a password."""
        if role not in ROLES:
            raise ValueError(f"unknown database role {role!r}: one of {', '.join(ROLES)}")
        user: str = getattr(self, f"{role}_db_user")
        given: SecretStr | None = getattr(self, f"{role}_db_password")
        file = self.db_password_dir / role
        password = given_or_file(given.get_secret_value() if given else None, file)
        if not password:
            raise DbPasswordMissingError(
                f"no password for database role {user}: set ONCEFLOW_{role.upper()}_DB_PASSWORD"
                f" (or, on the local stack, run `make up`, which generates {file})"
            )
        return user, password


@lru_cache
def get_settings() -> Settings:
    """Return the process-wide settings, read once."""
    return Settings()
