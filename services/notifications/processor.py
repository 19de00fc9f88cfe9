"""The consume-transform-produce loop: one Kafka transaction per batch holds the notifications,
the dead letters, the newly remembered ids and the input offsets (contract section 4b).

Two stages overlap: while batch N's transaction flushes and commits on the committer thread
(waits on the broker, without the GIL), this thread reads batch N+1 and routes it (pure); N+1 is
decided against the remembered ids only once N is concluded. A rebalance (which only happens
inside poll) waits for the transaction in flight to be decided before its callback goes on, so
revoked partitions were committed, or aborted and left to the new owner, by then.
"""

import functools
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
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
from services.notifications.batch import Batch, Position, decide, route_all
from services.notifications.recovery import RETRIES, Transactional, retry
from services.notifications.restore import (
    CONTENT_HEADER,
    changelog_partitions,
    restore,
    wait_settled,
)
from services.notifications.seen import SeenIds
from services.notifications.transform import Record
from services.notifications.watchdog import deadline

log = logging.getLogger("onceflow.notifications")
T = TypeVar("T")
# Errors that refuse one record for what it is, not for the broker's or the network's state:
# its source record becomes a dead letter with the error's message, the rest of its batch goes on.
REFUSED_RECORD = frozenset(
    {
        KafkaError.MSG_SIZE_TOO_LARGE,
        KafkaError.RECORD_LIST_TOO_LARGE,
        KafkaError.INVALID_MSG_SIZE,
    }
)


class LostInputError(RuntimeError):
    """Input the group never read was deleted by retention: stop, never skip it silently."""


@dataclass(frozen=True)
class Outcome:
    """How a transaction ended: committed (neither field), failed, or aborted because the
    output topic refused these records' notifications (position -> reason)."""

    error: KafkaException | None = None
    refused: dict[Position, str] = field(default_factory=dict)


@dataclass(frozen=True)
class InFlight:
    """A batch whose transaction is being completed on the committer thread."""

    batch: Batch
    future: "Future[Outcome]"
    polled: threading.Event  # set once the next consume() returned (or nobody waits for one)
    started: float  # monotonic, at its begin_transaction()


class Processor:
    """One instance of the notifications processor."""

    def __init__(
        self,
        *,
        notify: NotificationSettings,
        input_topic: str,
        window: timedelta,
        consumer: Consumer,
        producer: Callable[[], Producer],
        reader: Callable[[], Consumer],
        admin: AdminClient,
        seen: SeenIds,
    ) -> None:
        self._notify, self._input = notify, input_topic
        self._window = window
        self._consumer, self._reader, self._seen = consumer, reader, seen
        self._transactional = Transactional(producer)
        self._admin = admin
        self._owned: set[int] = set()
        # The ids this process committed and remembered, until the tail reader passes over
        # their changelog records (restore.py).
        self._mine: set[bytes] = set()
        self._tail: Consumer | None = None  # reads every instance's ids before each batch
        self._changelog: list[int] = []  # its partitions (housekeeping reads them again)
        self._transactions = 0
        self._output_mutated = False
        self._refused: dict[Position, str] = {}  # in the open transaction: position -> reason
        self._commit_tried = False  # the open transaction's commit was asked for
        # Notifications are produced without a delivery callback each (2,000 GIL hand-overs to
        # the committer a batch) until a transaction fails: the output topic may have refused one
        # (a failed delivery fails the transaction), so batches are watched until one commits.
        self._watched = False
        self._committer = ThreadPoolExecutor(1, thread_name_prefix="committer")
        self._inflight: InFlight | None = None
        self._rewound = False  # a failed batch was rewound since the last consume() began
        self._polls = 0  # consume() calls returned
        self._tail_at = -1  # self._polls when the changelog's tail was last read
        # Leaving the group: a rebalance in progress may still hand partitions over inside
        # close(); they are not read, so their committed offsets are not asked for (that
        # request never completes once the consumer is closing: a stop then waited 10 x 60 s).
        self._closing = False

    def run(self, stop: threading.Event) -> None:
        """Process batches until `stop` is set; raise on a fatal error (the caller exits)."""
        self._consumer.subscribe(
            [self._input], on_assign=self._assigned, on_revoke=self._revoked, on_lost=self._lost
        )
        next_housekeeping = 0.0
        try:
            while not stop.is_set():
                self._rewound = False
                records = self._poll()
                self._polls += 1
                if self._inflight is not None:
                    self._inflight.polled.set()
                if records:
                    self._transact(records)
                else:
                    self._settle()
                if time.monotonic() >= next_housekeeping:
                    self._settle()  # the cache is this thread's again
                    self._housekeeping()
                    next_housekeeping = time.monotonic() + 30
            self._settle()
        finally:
            if self._inflight is not None:
                # A failure between consume() and the set() above (LostInputError from _poll,
                # a consumer error) leaves the committer waiting for `polled` forever, and
                # shutdown() below would wait for it: release it so the fatal error exits.
                self._inflight.polled.set()
            self._committer.shutdown()  # after a failure: the transaction in flight ends first
            self._closing = True
            self._consumer.close()  # leaves the group; no transaction is open here
            if self._tail is not None:
                self._tail.close()

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
        """Route `records` while the previous batch commits, then decide them against every
        id notified up to now, and send their transaction on its way."""
        routed = route_all(records, self._notify.notify_max_event_bytes)
        self._settle()
        if self._rewound:
            # A batch before these failed and was rewound: they are read again after it.
            self._rewind(sorted({r.partition for r in records}))
            return
        if self._tail_at != self._polls:
            self._catch_up()  # no read of the tail since consume() returned these records
        batch = decide(routed, self._seen, self._horizon())
        self._launch(batch)

    def _launch(self, batch: Batch) -> None:
        """Begin the batch's transaction and produce its records here; flush, send the offsets
        and commit on the committer thread, then (once the next consume() has returned, see
        run()) remember the ids and read the changelog's tail there too."""
        polled = threading.Event()
        try:
            group = self._start(batch, set(), watched=self._watched)
        except KafkaException as exc:
            failed: Future[Outcome] = Future()
            failed.set_result(Outcome(error=exc))
            self._inflight = InFlight(batch, failed, polled, time.monotonic())
            return
        future = self._committer.submit(self._finish, batch, group, polled)
        self._inflight = InFlight(batch, future, polled, time.monotonic())

    def _finish(self, batch: Batch, group: Any, polled: threading.Event) -> "Outcome":
        """On the committer thread: the transaction's end, then the cache's catch-up."""
        outcome = self._complete(batch, group)
        if outcome.error is None and not outcome.refused:
            polled.wait()  # the tail is read after the next batch's consume() returned
            self._remember(batch)
            self._catch_up()
        return outcome

    def _settle(self, *, again: bool = True) -> None:
        """Wait for the transaction in flight and conclude it: counted, or retried alone for
        refused records, or aborted and its partitions rewound (self._rewound). In a rebalance
        callback (`again` False) nothing is tried again: a failed or refused batch is aborted
        and rewound, and its records are retried by whoever owns them after the rebalance."""
        flight = self._inflight
        if flight is None:
            return
        flight.polled.set()
        outcome = flight.future.result()  # a failed catch-up raises here: fatal, as before
        self._inflight = None
        batch, alone, failures = flight.batch, set[Position](), 0
        while outcome.error is not None or outcome.refused:
            if outcome.error is not None:
                # Aborted, or the producer re-created (recovery.py); raises when fenced.
                self._transactional.recover(outcome.error.args[0])
                failures += 1
                # A commit whose outcome is unknown (a new producer's init may complete it) is
                # not tried again; its ids are not remembered here, so the tail reader reads them
                # back if it did complete.
                if not (again and alone and not self._commit_tried and failures < RETRIES):
                    break
                # Records the broker refused leave a gap in the producer's sequence numbers,
                # which the next transaction meets; the abort bumped the epoch.
                outcome = self._attempt(batch, alone)
                continue
            if not again:
                break  # refused: already aborted
            # Refused alone: refused for what it is. The others may have been refused with the
            # record set they shared: each is tried again alone.
            settled = {at: why for at, why in outcome.refused.items() if at in alone}
            alone |= outcome.refused.keys()
            batch = batch.refusing(settled)
            failures = 0
            outcome = self._attempt(batch, alone)
        if outcome.error is not None or outcome.refused:
            self._rewind(list(batch.positions))
            self._rewound = True
            self._watched = True
            return
        self._watched = False
        metrics.COMMIT_SECONDS.observe(time.monotonic() - flight.started)
        metrics.TRANSACTIONS.labels("committed").inc()
        if alone:  # committed here, not on the committer thread
            self._remember(batch)
        batch.count()

    def _remember(self, batch: Batch) -> None:
        """A committed batch's ids into the cache (the restore points move as the tail is read),
        and among this process's own until the tail reader passes over their records."""
        self._seen.remember(batch.remembered, {})
        self._mine.update(event_id.encode() for event_id, _occurred, _content in batch.changelog)

    @property
    def _producer(self) -> Producer:
        return self._transactional.producer

    def _attempt(self, batch: Batch, alone: set[Position]) -> "Outcome":
        """One transaction of `batch` on this thread (the notifications of records at `alone`
        each sent in a record set of its own)."""
        try:
            group = self._start(batch, alone, watched=True)
        except KafkaException as exc:
            return Outcome(error=exc)
        return self._complete(batch, group)

    def _start(self, batch: Batch, alone: set[Position], *, watched: bool) -> Any:
        """Begin the transaction and produce the batch (`watched`: each notification with a
        delivery callback, which notes a refusal and its record); the consumer's group metadata
        of now (the generation the batch was read in)."""
        self._refused, self._commit_tried = {}, False
        self._producer.begin_transaction()
        self._produce(batch, alone, watched=watched)
        return self._consumer.consumer_group_metadata()

    def _complete(self, batch: Batch, group: Any) -> "Outcome":
        """Flush and commit the open transaction: committed, failed, or, when the output topic
        refused notifications for a data reason, aborted with those records' positions and the
        reason."""
        try:
            self._maybe_fault()
            self._producer.flush(30)  # delivery reports (refusals) arrive here
            if self._refused:
                refused = sorted(self._refused.items())
                log.warning("refused notifications: aborted, retried", extra={"refused": refused})
                retry(lambda: self._producer.abort_transaction(30))
                metrics.TRANSACTIONS.labels("aborted").inc()
                return Outcome(refused=self._refused)
            positions = [
                TopicPartition(self._input, p, offset) for p, offset in batch.positions.items()
            ]

            def send_offsets() -> None:
                with deadline("send_offsets_to_transaction"):
                    self._producer.send_offsets_to_transaction(positions, group, 30)

            def commit() -> None:
                with deadline("commit_transaction"):
                    self._producer.commit_transaction(30)

            retry(send_offsets)
            self._commit_tried = True
            retry(commit)
        except KafkaException as exc:
            return Outcome(error=exc)
        return Outcome()

    def _maybe_fault(self) -> None:
        self._transactions += 1
        notify = self._notify
        if notify.notify_fault_signal and self._transactions == notify.notify_fault_at_transaction:
            self._producer.flush(30)  # the records reach the broker before the fault
            log.warning("fault before commit: %s", notify.notify_fault_signal)
            os.kill(os.getpid(), signal.Signals[notify.notify_fault_signal])

    def _produce(self, batch: Batch, alone: set[Position], *, watched: bool) -> None:
        try:
            self._produce_all(batch, alone, watched=watched)
        except KafkaException:
            # A refusal reported meanwhile leaves the transaction unable to take more records.
            self._producer.flush(30)
            if not self._refused:
                raise

    def _produce_all(self, batch: Batch, alone: set[Position], *, watched: bool) -> None:
        notify, producer = self._notify, self._producer
        produce, topic = producer.produce, notify.notify_topic
        delivered = self._delivered_notification
        sent = list(zip(batch.notifications, batch.sources, strict=True))
        for out, source in self._mutated(sent):
            at: Position = (source.partition, source.offset)
            if alone and at in alone:
                producer.flush(30)
            try:
                if watched:
                    callback = functools.partial(delivered, at)
                    produce(topic, out.value, out.key, headers=out.headers, on_delivery=callback)
                else:
                    produce(topic, out.value, out.key, headers=out.headers)
            except KafkaException as exc:  # refused by the client before it was queued
                if exc.args[0].code() not in REFUSED_RECORD:
                    raise
                self._refuse(at, exc.args[0])
            if alone and at in alone:
                producer.flush(30)
        for d in batch.dead_letters:
            produce(notify.notify_dlq_topic, d.value, d.key, headers=d.headers)
        changelog = notify.notify_changelog_topic
        for event_id, occurred_at, content in batch.changelog:
            # keyed (partitioned) by event id
            produce(
                changelog,
                occurred_at.encode(),
                event_id.encode(),
                headers=[(CONTENT_HEADER, content.encode())],
            )

    def _delivered_notification(
        self, at: Position, error: KafkaError | None, _message: Message
    ) -> None:
        self._refuse(at, error)

    def _refuse(self, at: Position, error: KafkaError | None) -> None:
        """Note a notification refused for what it is (REFUSED_RECORD); any other delivery
        error fails the commit, and takes the transaction's error path."""
        if error is not None and error.code() in REFUSED_RECORD:
            topic = self._notify.notify_topic
            self._refused[at] = f"{topic} refused the notification: {error.str()}"

    def _mutated(self, notifications: list[T]) -> list[T]:
        """TEST ONLY: the notifications as sent, one lost or doubled when the fault asks."""
        fault = self._notify.notify_fault_output
        if not fault or self._output_mutated or not notifications:
            return notifications
        self._output_mutated = True
        log.warning("fault injection: %s (test only)", fault)
        first, *rest = notifications
        return rest if fault == "lose_one" else [first, first, *rest]

    def _rewind(self, partitions: list[int]) -> None:
        """After an abort: back to the committed offsets of the batch's partitions."""
        owned = [TopicPartition(self._input, p) for p in partitions if p in self._owned]
        for tp in self._starting_offsets(owned):
            self._consumer.seek(tp)

    def _starting_offsets(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        # read_committed: the broker answers once no transaction of the group is pending.
        committed = retry(lambda: self._consumer.committed(partitions, timeout=60))
        for tp in committed:
            if tp.offset == OFFSET_INVALID:
                tp.offset = OFFSET_BEGINNING  # never committed: the partition from its start
        return committed

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        if self._closing:
            log.info(
                "assigned while leaving: not read",
                extra={"partitions": [tp.partition for tp in partitions]},
            )
            return
        self._settle(again=False)
        starts = self._starting_offsets(partitions)
        ids = [tp.partition for tp in starts]
        if ids:
            # The previous owners' last transactions are decided before their ids are read (an
            # abandoned one is aborted by the coordinator within its timeout).
            settle = self._notify.notify_transaction_timeout_ms / 1000 + 30
            changelog = self._notify.notify_changelog_topic
            wait_settled(self._admin, changelog, self._changelog_partitions(), settle)
            self._catch_up()
        consumer.incremental_assign(starts)
        self._owned.update(ids)
        log.info("assigned", extra={"partitions": ids})

    def _catch_up(self) -> None:
        """Read the whole changelog's committed tail into the cache: the ids every instance
        notified up to now, whichever input partition they came from."""
        self._tail_at = self._polls
        if self._tail is None:
            self._tail = self._reader()
        topic = self._notify.notify_changelog_topic
        restore(self._tail, self._seen, topic, self._changelog_partitions(), mine=self._mine)

    def _changelog_partitions(self) -> list[int]:
        if not self._changelog:
            self._changelog = changelog_partitions(self._admin, self._notify.notify_changelog_topic)
        return self._changelog

    def _revoked(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._disown(partitions)
        self._settle(again=False)  # committed or aborted before the new owner reads them
        log.info("revoked", extra={"partitions": [tp.partition for tp in partitions]})

    def _lost(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._disown(partitions)
        self._settle(again=False)
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
        self._changelog = []  # a partition added to the changelog is read from the next batch
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
