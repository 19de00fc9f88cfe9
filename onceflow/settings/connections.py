"""Addresses, names and credentials of the pipeline's components (every process uses them)."""

from functools import lru_cache
from typing import Self
from urllib.parse import quote

from pydantic import SecretStr, model_validator

from onceflow.settings.topology import TopologySettings
from onceflow.topology import SINGLE


class Settings(TopologySettings):
    """Addresses, names and credentials of the pipeline's components."""

    pg_host: str = "127.0.0.1"
    pg_port: int = 5432
    pg_database: str = "shop"

    # Only for provisioning (roles, database, slot). Unset locally: the stack then uses the
    # cluster's private Unix socket with peer authentication.
    superuser_dsn: SecretStr | None = None

    owner_db_user: str = "shop_owner"
    owner_db_password: SecretStr = SecretStr("shop_owner")
    app_db_user: str = "shop_app"
    app_db_password: SecretStr = SecretStr("shop_app")
    cdc_db_user: str = "shop_cdc"
    cdc_db_password: SecretStr = SecretStr("shop_cdc")
    spark_db_user: str = "shop_spark"
    spark_db_password: SecretStr = SecretStr("shop_spark")
    analyst_db_user: str = "analyst"
    analyst_db_password: SecretStr = SecretStr("analyst")
    # prometheus-postgres-exporter: member of pg_monitor only, no access to any table's rows.
    monitor_db_user: str = "shop_monitor"
    monitor_db_password: SecretStr = SecretStr("shop_monitor")

    replication_slot: str = "onceflow_outbox"
    # Postgres' cap on the WAL one slot may hold back. Past it the slot is lost (a loud failure,
    # docs/operations.md) rather than the database's disk filling up.
    pg_max_slot_wal_keep_size: str = "2GB"

    # Default: every Kafka node and the first Connect worker of the topology.
    kafka_bootstrap: str = SINGLE.bootstrap
    connect_url: str = SINGLE.connect_url
    connector_name: str = "orders-outbox"
    topic: str = "outbox.event.order"

    api_host: str = "127.0.0.1"
    api_port: int = 8000

    @model_validator(mode="after")
    def _follow_topology(self) -> Self:
        nodes = self.layout
        self.default(kafka_bootstrap=nodes.bootstrap, connect_url=nodes.connect_url)
        return self

    def dsn(self, role: str) -> str:
        """Return a libpq URI for one of the roles: owner, app, cdc, spark, analyst, monitor."""
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
        """(user, password) of one of the roles."""
        password: SecretStr = getattr(self, f"{role}_db_password")
        return getattr(self, f"{role}_db_user"), password.get_secret_value()


@lru_cache
def get_settings() -> Settings:
    """Return the process-wide settings, read once."""
    return Settings()
