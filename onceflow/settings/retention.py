"""How long each piece of state lives (contract section 5, "Bounded state").

docs/operations.md explains each window and its default. Durations take seconds or ISO 8601
(`ONCEFLOW_DEDUP_WINDOW=P8D`, `ONCEFLOW_MAINTENANCE_INTERVAL=PT10M`).
"""

from datetime import timedelta
from functools import lru_cache
from typing import Self

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Kafka checks for segments to delete every 5 minutes (log.retention.check.interval.ms).
RETENTION_CHECK = timedelta(minutes=5)


class RetentionSettings(BaseSettings):
    """Retention of the topics, the de-duplication window, the job's staging area and the
    maintenance schedule."""

    model_config = SettingsConfigDict(env_prefix="ONCEFLOW_", env_file=".env", extra="ignore")

    # Kafka keeps a record at least topic_retention_ms and at most that plus one segment's age.
    topic_retention_ms: int = Field(default=7 * 24 * 3600 * 1000, ge=60_000)
    topic_segment_ms: int = Field(default=3600 * 1000, ge=10_000)
    # Event ids are remembered at least this long after their event occurred.
    dedup_window: timedelta = timedelta(days=8)
    # Width of the partitions of the set of remembered ids (forgetting drops whole partitions).
    dedup_partition: timedelta = Field(default=timedelta(days=1), gt=timedelta(0))
    # How often the maintenance process purges and prunes (the contract asks for <= 15 min).
    maintenance_interval: timedelta = Field(
        default=timedelta(minutes=10), gt=timedelta(0), le=timedelta(minutes=15)
    )
    maintenance_batch_rows: int = Field(default=5000, ge=1)
    # Rows in the job's staging area (aggregation.staged_records) older than this are deleted:
    # batches of a query that no longer runs (a discarded checkpoint, a finished backfill). A
    # running query deletes its own at every fold; this must exceed any batch's staging-to-fold
    # time (deleting a batch in flight fails it, and Spark re-runs it).
    staged_retention: timedelta = Field(default=timedelta(hours=6), gt=timedelta(0))
    maintenance_metrics_port: int = 9102
    # Idempotency-Key records are kept this long (contract: at least 24 h).
    api_idempotency_retention_hours: float = Field(default=24, gt=0)
    # BENCHMARKS AND TESTS ONLY: allow windows below the contract's minimums (bench/soak.sh).
    allow_short_windows: bool = False

    @property
    def idempotency_retention(self) -> timedelta:
        """api_idempotency_retention_hours as a duration."""
        return timedelta(hours=self.api_idempotency_retention_hours)

    @property
    def topic_retention(self) -> timedelta:
        """topic_retention_ms as a duration."""
        return timedelta(milliseconds=self.topic_retention_ms)

    @property
    def record_lifetime(self) -> timedelta:
        """The longest a record can stay on a topic: retention, a segment, a cleaner cycle."""
        return (
            self.topic_retention + timedelta(milliseconds=self.topic_segment_ms) + RETENTION_CHECK
        )

    @model_validator(mode="after")
    def _keys_kept_a_day(self) -> Self:
        if self.api_idempotency_retention_hours < 24 and not self.allow_short_windows:
            raise ValueError(
                "api_idempotency_retention_hours must be at least 24: the contract promises "
                "that a retry within 24 h replays its first answer"
            )
        return self

    @model_validator(mode="after")
    def _window_outlives_records(self) -> Self:
        if self.dedup_window < self.record_lifetime:
            raise ValueError(
                f"dedup_window {self.dedup_window} is shorter than a record can stay on the topic "
                f"({self.record_lifetime}: retention + one segment + the cleaner's check), so a "
                "replayed record could be counted twice: lengthen it or shorten the retention"
            )
        return self


@lru_cache
def get_retention_settings() -> RetentionSettings:
    """Return the process-wide retention settings, read once."""
    return RetentionSettings()
