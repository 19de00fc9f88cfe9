"""The Spark standalone cluster's shared secret (`spark.authenticate`, docs/security.md): the
master and its workers ask every application for it, so only a program holding it can run code
on the workers. The cluster's Spark daemons (and so their executors) and the aggregation job's
driver hold it; nothing else does. `local[*]` (the single topology) needs none.

The local stack generates it once into .stack/secrets/spark/auth-secret (mode 0600,
stack/spark_secret.py); another environment sets ONCEFLOW_SPARK_AUTH_SECRET (compose). There is
no default.
"""

from functools import lru_cache
from pathlib import Path

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from onceflow import paths
from onceflow.settings.secrets import required


class SparkSecretMissingError(RuntimeError):
    """Neither ONCEFLOW_SPARK_AUTH_SECRET nor the secret's file is there."""


class SparkAuthSettings(BaseSettings):
    """Where the Spark cluster's shared secret comes from."""

    model_config = SettingsConfigDict(env_prefix="ONCEFLOW_", env_file=".env", extra="ignore")

    # Wins over the file when set (compose, production).
    spark_auth_secret: SecretStr | None = None
    spark_auth_secret_file: Path = paths.SPARK_AUTH_SECRET

    def secret(self) -> str:
        """The shared secret: the variable's, else the file's first line."""
        return required(
            self.spark_auth_secret,
            self.spark_auth_secret_file,
            what="Spark auth secret",
            variable="ONCEFLOW_SPARK_AUTH_SECRET",
            missing=SparkSecretMissingError,
        )

    def spark_conf(self) -> dict[str, str]:
        """The Spark properties that make a daemon ask for the secret, and an application give
        it (never on a command line: `ps` shows those to every user of the host)."""
        return {"spark.authenticate": "true", "spark.authenticate.secret": self.secret()}


@lru_cache
def get_spark_auth_settings() -> SparkAuthSettings:
    """Return the process-wide settings, read once (the secret is read when asked)."""
    return SparkAuthSettings()
