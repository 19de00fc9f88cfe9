"""Continuous reconciliation (services/reconcile, docs/operations.md "Reconciliation"): which
days are closed, how many are checked each run, how long what was read is kept."""

from datetime import timedelta
from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ReconcileSettings(BaseSettings):
    """When a UTC day is closed and how much each reconciliation run does."""

    model_config = SettingsConfigDict(env_prefix="ONCEFLOW_", env_file=".env", extra="ignore")

    # A UTC day is closed (checked) once its end is this far past: every event of it has had
    # this long to reach the topic and the tables.
    reconcile_settle: timedelta = Field(default=timedelta(minutes=15), ge=timedelta(0))
    # Each run checks the newest this many closed days (older ones keep their last result).
    reconcile_days: int = Field(default=7, ge=1, le=366)
    # Events read from the topic are kept this many days after their day (a refund needs the
    # order's payment, read earlier); days older than that cannot be checked.
    reconcile_keep_days: int = Field(default=35, ge=2)
    # A run reads the topic for at most this long, then carries on in the next run.
    reconcile_read_budget_s: float = Field(default=120.0, gt=0)
    # How long a run waits for the job to apply every record it read before it compares the
    # analytics tables (it compares only the order tables and the topic when the job is behind).
    reconcile_job_wait_s: float = Field(default=30.0, ge=0)
    # Orders named per difference in the report (the count of all involved is kept).
    reconcile_named_orders: int = Field(default=20, ge=1)


@lru_cache
def get_reconcile_settings() -> ReconcileSettings:
    """Return the process-wide reconciliation settings, read once."""
    return ReconcileSettings()
