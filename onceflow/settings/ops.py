"""The ops credential (contract section 2b): user `ops` and one password, asked for (HTTP Basic)
by Kafka Connect's REST API and the dashboard, and sent by `onceflow-ops` and the stack.

The local stack generates the password once into .stack/secrets/ops-password (mode 0600,
stack/ops_secret.py); another environment sets ONCEFLOW_OPS_PASSWORD (or points
ONCEFLOW_OPS_PASSWORD_FILE at its own file). There is no default password.
"""

from functools import lru_cache
from pathlib import Path

import httpx
from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from onceflow import paths
from onceflow.settings.secrets import required


class OpsCredentialMissingError(RuntimeError):
    """Neither ONCEFLOW_OPS_PASSWORD nor the password file is there."""


class OpsSettings(BaseSettings):
    """Who ops are: the user name and where the password comes from."""

    model_config = SettingsConfigDict(env_prefix="ONCEFLOW_", env_file=".env", extra="ignore")

    ops_user: str = "ops"
    # Wins over the file when set (compose, production).
    ops_password: SecretStr | None = None
    ops_password_file: Path = paths.OPS_PASSWORD

    def password(self) -> str:
        """The ops password: the variable's, else the file's first line."""
        return required(
            self.ops_password,
            self.ops_password_file,
            what="ops password",
            variable="ONCEFLOW_OPS_PASSWORD",
            missing=OpsCredentialMissingError,
        )

    def auth(self) -> httpx.BasicAuth:
        """HTTP Basic credentials for Kafka Connect's REST API and the dashboard."""
        return httpx.BasicAuth(self.ops_user, self.password())


@lru_cache
def get_ops_settings() -> OpsSettings:
    """Return the process-wide ops settings, read once (the password is read when asked)."""
    return OpsSettings()
