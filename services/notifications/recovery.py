"""What a failed transaction leaves to do, after Kafka's transaction error classes (KIP-1050):
retry the call, abort the transaction, re-create the producer, or stop.

Only fencing (another incarnation holds our transactional.id) and errors a new producer would
meet again (authorisation, configuration) stop the instance. Every other failure aborts the
transaction (librdkafka bumps the epoch when the error asks for it, e.g.
OUT_OF_ORDER_SEQUENCE_NUMBER) or, when the producer cannot abort (a fatal idempotence error,
an abort that fails), replaces it: a new producer with the same transactional.id, whose
init_transactions() takes a new epoch and aborts whatever the old one left open. Either way
the caller rewinds its consumer to the committed offsets.
"""

import contextlib
import enum
import logging
from collections.abc import Callable
from typing import TypeVar

from confluent_kafka import KafkaError, KafkaException, Producer

from services.notifications import metrics

log = logging.getLogger("onceflow.notifications")
T = TypeVar("T")
RETRIES = 10
# Another incarnation of this transactional.id took over: this one is a zombie.
FENCED = frozenset({KafkaError._FENCED, KafkaError.PRODUCER_FENCED})
# Fencing when the client says so (fatal); otherwise abortable (e.g. a produce that met an epoch
# bumped by the protocol, KIP-588/890).
EPOCH = KafkaError.INVALID_PRODUCER_EPOCH
# What a new producer would meet again: stopping (and an operator) is the only way on.
FATAL = frozenset(
    {
        KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        KafkaError.CLUSTER_AUTHORIZATION_FAILED,
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.GROUP_AUTHORIZATION_FAILED,
        KafkaError.INVALID_TRANSACTION_TIMEOUT,
        KafkaError.UNSUPPORTED_VERSION,
        KafkaError.UNSUPPORTED_FOR_MESSAGE_FORMAT,
        KafkaError._INVALID_ARG,
    }
)


class Action(enum.Enum):
    """The way on after a failed transactional call."""

    ABORT = "abort"  # abortable (KIP-1050): abort, rewind, try again
    RECREATE = "recreate"  # the producer is unusable: a new one (new epoch), rewind
    STOP = "stop"  # fenced, or fatal for good: the instance exits


def action(error: KafkaError) -> Action:
    """What to do about `error`, raised by a call of a transaction."""
    fenced = error.code() in FENCED or (error.code() == EPOCH and error.fatal())
    if fenced or error.code() in FATAL:
        return Action.STOP
    if error.fatal():
        return Action.RECREATE
    return Action.ABORT


def retry(call: Callable[[], T]) -> T:
    """`call`, again while the client says its error is retriable."""
    for attempt in range(RETRIES):
        try:
            return call()
        except KafkaException as exc:
            error: KafkaError = exc.args[0]
            if not error.retriable() or attempt == RETRIES - 1:
                raise
            log.info("retrying after a retriable error: %s", error.str())
    raise AssertionError("unreachable")


class Transactional:
    """The instance's transactional producer, replaced (same transactional.id) when it fails."""

    def __init__(self, make: Callable[[], Producer]) -> None:
        self._make = make
        self.producer = self._started()

    def _started(self) -> Producer:
        producer = self._make()
        retry(lambda: producer.init_transactions(60))
        return producer

    def recover(self, error: KafkaError) -> None:
        """After `error` failed the open transaction: abort it, or replace the producer;
        raise KafkaException when the instance must stop."""
        if action(error) is Action.STOP:
            raise KafkaException(error)
        if action(error) is Action.ABORT:
            log.warning("transaction failed, aborting: %s", error.str())
            try:
                retry(lambda: self.producer.abort_transaction(30))
            except KafkaException as exc:
                error = exc.args[0]
                if action(error) is Action.STOP:
                    raise
            else:
                metrics.TRANSACTIONS.labels("aborted").inc()
                return
        log.warning("producer unusable, re-creating it (new epoch): %s", error.str())
        self.replace()

    def replace(self) -> None:
        """Drop the producer and what it still holds; start a new one with the same id."""
        old = self.producer
        with contextlib.suppress(KafkaException, RuntimeError):
            old.purge()
            old.flush(0)  # the purged records' delivery reports
        # Dropped, not closed: close() would try to abort with the failed producer.
        self.producer = self._started()
        metrics.TRANSACTIONS.labels("aborted").inc()
        metrics.PRODUCERS_RECREATED.inc()
