"""The processor's Kafka clients, configured as contract section 4b requires."""

from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, Producer

from onceflow.settings import NotificationSettings, Settings
from onceflow.settings.kafka_auth import client_config


def consumer_config(settings: Settings, notify: NotificationSettings) -> dict[str, Any]:
    """Committed records only, offsets committed only inside our transactions."""
    return {
        **client_config(settings.kafka_bootstrap, "notifications"),
        "group.id": notify.notify_group,
        "isolation.level": "read_committed",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "partition.assignment.strategy": "cooperative-sticky",
        "session.timeout.ms": notify.notify_session_timeout_ms,
        "heartbeat.interval.ms": notify.notify_session_timeout_ms // 3,
        # A committed offset that retention deleted is lost input: fail, never skip.
        # (A partition without a committed offset starts at its beginning: see assigned().)
        "auto.offset.reset": "error",
        "fetch.wait.max.ms": notify.notify_batch_ms,
        # Partitions added to the input topic are assigned within seconds, not 5 minutes.
        "topic.metadata.refresh.interval.ms": 10_000,
    }


def producer_config(
    settings: Settings, notify: NotificationSettings, instance: int
) -> dict[str, Any]:
    """A transactional producer whose id is stable per instance (a restart fences its zombie)."""
    return {
        **client_config(settings.kafka_bootstrap, "notifications"),
        "transactional.id": notify.transactional_id(instance),
        "transaction.timeout.ms": notify.notify_transaction_timeout_ms,
        "enable.idempotence": True,
        "acks": "all",
        # Every transaction flushes before its commit, and a flush sends at once whatever
        # linger is left: a long linger only makes the produce requests of a batch fewer.
        "linger.ms": 100,
        "message.max.bytes": notify.notify_dead_letter_max_bytes,
    }


def restore_config(settings: Settings, notify: NotificationSettings) -> dict[str, Any]:
    """A group-less reader of the changelog, up to its last stable offset."""
    return {
        **client_config(settings.kafka_bootstrap, "notifications"),
        "group.id": f"{notify.notify_group}-restore",  # required by the client; never joined
        "isolation.level": "read_committed",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        # Read before every batch: at the end, the broker answers at once (0.6 ms a caught-up
        # read of 3 partitions here; 11 ms with 5, 500 ms by default). Assigned only while it
        # reads, so it never spins on an idle topic.
        "fetch.wait.max.ms": 0,
        # Restore points older than the log start were forgotten by retention: read what is left.
        "auto.offset.reset": "earliest",
    }


def make_clients(
    settings: Settings, notify: NotificationSettings, instance: int
) -> tuple[Consumer, Callable[[], Producer]]:
    """The consumer (not yet subscribed) and how to make the producer (the processor
    initialises its transactions, and makes a new one when the old one failed)."""
    config = producer_config(settings, notify, instance)
    return Consumer(consumer_config(settings, notify)), lambda: Producer(config)
