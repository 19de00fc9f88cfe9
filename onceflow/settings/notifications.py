"""Tunables of the notifications processor (`ONCEFLOW_NOTIFY_*`, contract section 4b).

Its input topic is `Settings.topic`; its de-duplication window is
`RetentionSettings.dedup_window` (one window for every de-duplicating consumer).
"""

from functools import lru_cache
from pathlib import Path
from typing import Literal, Self

from pydantic import Field, model_validator

from onceflow import contract
from onceflow.settings.topology import SINGLE_DATA, TopologySettings


class NotificationSettings(TopologySettings):
    """Topics, group, batching and timeouts of the notifications processor."""

    notify_topic: str = "notifications.order"
    notify_dlq_topic: str = "notifications.order.dlq"
    # The remembered event ids, written in the same transaction as the notifications; one
    # partition per input partition (compact,delete: forgets ids after the window).
    notify_changelog_topic: str = "onceflow-notifications-seen"
    # The consumer group; instance n's transactional.id is "<group>-<n>" (stable across restarts,
    # so a restarted instance fences its own predecessor).
    notify_group: str = "onceflow-notifications"
    notify_instances: int = Field(default=2, ge=1)
    # A batch (one transaction) closes at this many records or after this long.
    notify_batch_records: int = Field(default=2000, ge=1)
    notify_batch_ms: int = Field(default=50, ge=1)
    # An instance that dies mid-transaction pins read_committed readers for at most this long.
    notify_transaction_timeout_ms: int = Field(default=10_000, ge=1000)
    notify_session_timeout_ms: int = Field(default=10_000, ge=6000)
    # A record's value larger than this is a dead letter (same limit as the aggregation job's).
    notify_max_event_bytes: int = contract.MAX_EVENT_BYTES
    # Largest dead letter (the raw input record, up to the broker's 1 MiB, plus its headers):
    # the producer's and the dead-letter topic's limit.
    notify_dead_letter_max_bytes: int = 2 * 1024 * 1024
    # Instance n serves metrics on 127.0.0.1:<base + n>.
    notify_metrics_port_base: int = 9110
    # Local cache of the remembered ids (the changelog topic is the truth; this can be deleted).
    # Default: in the topology's data folder.
    notify_state_dir: Path = SINGLE_DATA.notifications
    notify_log_level: str = "INFO"
    # TESTS ONLY: in its Nth transaction, after producing and before committing, send itself
    # this signal (SIGKILL: a crash; SIGSTOP: a stall, so it returns as a zombie).
    notify_fault_signal: Literal["", "SIGKILL", "SIGSTOP"] = ""
    notify_fault_at_transaction: int = 0
    # TESTS ONLY: the first transaction with notifications leaves one out / sends one twice
    # (the oracles must notice: tests/integration/test_mutations.py).
    notify_fault_output: Literal["", "lose_one", "duplicate_one"] = ""

    @model_validator(mode="after")
    def _follow_topology(self) -> Self:
        self.default(notify_state_dir=self.data.notifications)
        return self

    def transactional_id(self, instance: int) -> str:
        """The stable transactional.id of instance `instance`."""
        return f"{self.notify_group}-{instance}"

    def metrics_port(self, instance: int) -> int:
        """The loopback metrics port of instance `instance`."""
        return self.notify_metrics_port_base + instance


@lru_cache
def get_notification_settings() -> NotificationSettings:
    """Return the process-wide notification settings, read once."""
    return NotificationSettings()
