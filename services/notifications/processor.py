"""The consume-transform-produce loop: one Kafka transaction per batch holds the notifications,
the dead letters, the newly remembered ids and the input offsets (contract section 4b).

No transaction is ever open while the consumer polls, so a rebalance (which only happens
inside poll) never finds one: revoked partitions were committed by the batch before.
"""

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_INVALID,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient

from onceflow.settings import NotificationSettings
from services.notifications import metrics
from services.notifications.batch import Batch, plan
from services.notifications.restore import restore, wait_settled
from services.notifications.seen import SeenIds
from services.notifications.transform import Record

log = logging.getLogger("onceflow.notifications")
T = TypeVar("T")
_RETRIES = 10


class LostInputError(RuntimeError):
    """Input the group never read was deleted by retention: stop, never skip it silently."""


class Processor:
    """One instance of the notifications processor."""

    def __init__(
        self,
        *,
        notify: NotificationSettings,
        input_topic: str,
        window: timedelta,
        consumer: Consumer,
        producer: Producer,
        reader: Callable[[], Consumer],
        admin: AdminClient,
        seen: SeenIds,
    ) -> None:
        self._notify, self._input = notify, input_topic
        self._window = window
        self._consumer, self._producer, self._reader, self._seen = consumer, producer, reader, seen
        self._admin = admin
        self._owned: set[int] = set()
        self._changelog_ends: dict[int, int] = {}
        self._transactions = 0
        self._output_mutated = False

    def run(self, stop: threading.Event) -> None:
        """Process batches until `stop` is set; raise on a fatal error (the caller exits)."""
        self._consumer.subscribe(
            [self._input], on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._lost
        )
        next_housekeeping = 0.0
        try:
            while not stop.is_set():
                records = self._poll()
                if records:
                    self._transact(records)
                if time.monotonic() >= next_housekeeping:
                    self._housekeeping()
                    next_housekeeping = time.monotonic() + 30
        finally:
            self._consumer.close()  # leaves the group; no transaction is open here

    def _poll(self) -> list[Record]:
        notify = self._notify
        messages = self._consumer.consume(notify.notify_batch_records, notify.notify_batch_ms / 1e3)
        records = []
        for message in messages:
            error = message.error()
            if error is not None:
                self._on_error(error)
                continue
            partition, offset = message.partition(), message.offset()
            assert partition is not None
            assert offset is not None
            # A message fetched before its partition was revoked belongs to the new owner.
            if partition in self._owned:
                records.append(_record(message, partition, offset))
        return records

    def _on_error(self, error: KafkaError) -> None:
        if error.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
            raise LostInputError(
                f"{self._input}: {error.str()}. Records this group had not yet processed were "
                "deleted by retention, so their notifications cannot be produced; "
                "see docs/notifications.md, 'A consumer behind retention'"
            )
        if error.fatal():
            raise KafkaException(error)
        if error.code() != KafkaError._PARTITION_EOF:
            log.warning("consumer error: %s", error.str())

    def _transact(self, records: list[Record]) -> None:
        batch = plan(records, self._seen, self._notify.notify_max_event_bytes, self._horizon())
        started = time.monotonic()
        self._changelog_ends = {}
        try:
            self._producer.begin_transaction()
            self._produce(batch)
            self._maybe_fault()
            positions = [
                TopicPartition(self._input, p, offset) for p, offset in batch.positions.items()
            ]
            self._retry(
                lambda: self._producer.send_offsets_to_transaction(
                    positions, self._consumer.consumer_group_metadata(), 30
                )
            )
            self._retry(lambda: self._producer.commit_transaction(30))
        except KafkaException as exc:
            error: KafkaError = exc.args[0]
            if error.fatal() or not error.txn_requires_abort():
                raise
            log.warning("transaction aborted: %s", error.str())
            self._producer.abort_transaction(30)
            metrics.TRANSACTIONS.labels("aborted").inc()
            self._rewind(list(batch.positions))
            return
        metrics.COMMIT_SECONDS.observe(time.monotonic() - started)
        metrics.TRANSACTIONS.labels("committed").inc()
        self._seen.remember(batch.remembered, self._changelog_ends)
        batch.count()

    def _maybe_fault(self) -> None:
        self._transactions += 1
        notify = self._notify
        if notify.notify_fault_signal and self._transactions == notify.notify_fault_at_transaction:
            self._producer.flush(30)  # the records reach the broker before the fault
            log.warning("fault before commit: %s", notify.notify_fault_signal)
            os.kill(os.getpid(), signal.Signals[notify.notify_fault_signal])

    def _produce(self, batch: Batch) -> None:
        notify = self._notify
        for n in self._mutated(batch.notifications):
            self._producer.produce(notify.notify_topic, n.value, n.key, headers=n.headers)
        for d in batch.dead_letters:
            self._producer.produce(notify.notify_dlq_topic, d.value, d.key, headers=d.headers)
        for partition, event_id, occurred_at in batch.changelog:
            self._producer.produce(
                notify.notify_changelog_topic,
                occurred_at.encode(),
                event_id.encode(),
                partition=partition,
                on_delivery=self._delivered,
            )

    def _mutated(self, notifications: list[T]) -> list[T]:
        """TEST ONLY: the notifications as sent, one lost or doubled when the fault asks."""
        fault = self._notify.notify_fault_output
        if not fault or self._output_mutated or not notifications:
            return notifications
        self._output_mutated = True
        log.warning("fault injection: %s (test only)", fault)
        first, *rest = notifications
        return rest if fault == "lose_one" else [first, first, *rest]

    def _delivered(self, error: KafkaError | None, message: Message) -> None:
        partition, offset = message.partition(), message.offset()
        if error is None and partition is not None and offset is not None:
            end = self._changelog_ends.get(partition, 0)
            self._changelog_ends[partition] = max(end, offset + 1)

    @staticmethod
    def _retry(call: Callable[[], T]) -> T:
        """`call`, again while the client says its error is retriable."""
        for attempt in range(_RETRIES):
            try:
                return call()
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                if not error.retriable() or attempt == _RETRIES - 1:
                    raise
                log.info("retrying after a retriable error: %s", error.str())
        raise AssertionError("unreachable")

    def _rewind(self, partitions: list[int]) -> None:
        """After an abort: back to the committed offsets of the batch's partitions."""
        owned = [TopicPartition(self._input, p) for p in partitions if p in self._owned]
        for tp in self._starting_offsets(owned):
            self._consumer.seek(tp)

    def _starting_offsets(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        # read_committed: the broker answers once no transaction of the group is pending.
        committed = self._consumer.committed(partitions, timeout=60)
        for tp in committed:
            if tp.offset == OFFSET_INVALID:
                tp.offset = OFFSET_BEGINNING  # never committed: the partition from its start
        return committed

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        starts = self._starting_offsets(partitions)
        ids = [tp.partition for tp in starts]
        changelog = self._notify.notify_changelog_topic
        if ids:
            # An abandoned transaction is aborted by the coordinator within its timeout.
            settle = self._notify.notify_transaction_timeout_ms / 1000 + 30
            wait_settled(self._admin, changelog, ids, settle)
        # A reader per restore: an idle one would keep a connection (and its errors) open.
        reader = self._reader()
        try:
            restore(reader, self._seen, changelog, ids)
        finally:
            reader.close()
        consumer.incremental_assign(starts)
        self._owned.update(ids)
        log.info("assigned", extra={"partitions": ids})

    def _revoked(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._disown(partitions)
        log.info("revoked", extra={"partitions": [tp.partition for tp in partitions]})

    def _lost(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._disown(partitions)
        log.warning("lost", extra={"partitions": [tp.partition for tp in partitions]})

    def _disown(self, partitions: list[TopicPartition]) -> None:
        """Forget partitions this instance no longer reads, and their lag: the new owner reports
        it (a kept value would be a stale lag that NotificationsLagHigh sums)."""
        for tp in partitions:
            self._owned.discard(tp.partition)
            metrics.LAG.remove(str(tp.partition))

    def _horizon(self) -> int:
        """Epoch seconds where the de-duplication window starts."""
        return int((datetime.now(UTC) - self._window).timestamp())

    def _housekeeping(self) -> None:
        forgotten = self._seen.forget_before(self._horizon())
        metrics.FORGOTTEN.inc(forgotten)
        for tp in self._consumer.assignment():
            _low, high = self._consumer.get_watermark_offsets(tp, cached=True) or (-1, -1)
            (position,) = self._consumer.position([tp])
            if high >= 0 and position.offset >= 0:
                metrics.LAG.labels(str(tp.partition)).set(high - position.offset)


def _record(message: Message, partition: int, offset: int) -> Record:
    headers: Any = message.headers() or []
    return Record(message.key(), message.value(), headers, partition, offset)
