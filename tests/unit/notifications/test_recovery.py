"""After a failed transaction: abortable errors abort, an unusable producer is re-created with
the same transactional.id, and only fencing or errors a new producer would meet stop."""

from typing import Any, cast

import pytest
from confluent_kafka import KafkaError, KafkaException

from services.notifications.recovery import Action, Transactional, action

BUMP = KafkaError(
    KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER, "requires epoch bump", txn_requires_abort=True
)
ERRONEOUS = KafkaError(KafkaError._STATE, "Erroneous state")
FATAL_IDEMPOTENCE = KafkaError(KafkaError.UNKNOWN_PRODUCER_ID, "fatal", fatal=True)
FENCED = KafkaError(KafkaError._FENCED, "fenced", fatal=True)


class FakeProducer:
    """A producer whose abort_transaction raises the given errors, one per call."""

    def __init__(self, abort_errors: list[KafkaError]) -> None:
        self.abort_errors = abort_errors
        self.aborts = self.inits = self.purges = 0

    def init_transactions(self, _timeout: float) -> None:
        self.inits += 1

    def abort_transaction(self, _timeout: float) -> None:
        self.aborts += 1
        if self.abort_errors:
            raise KafkaException(self.abort_errors.pop(0))

    def purge(self) -> None:
        self.purges += 1

    def flush(self, _timeout: float) -> int:
        return 0


def transactional(*abort_errors: KafkaError) -> tuple[Transactional, list[FakeProducer]]:
    made: list[FakeProducer] = []

    def make() -> Any:
        made.append(FakeProducer(list(abort_errors) if not made else []))
        return made[-1]

    return Transactional(make), made


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (BUMP, Action.ABORT),
        (ERRONEOUS, Action.ABORT),
        (KafkaError(KafkaError._TIMED_OUT, "timed out", retriable=True), Action.ABORT),
        (KafkaError(KafkaError.ILLEGAL_GENERATION, txn_requires_abort=True), Action.ABORT),
        (FATAL_IDEMPOTENCE, Action.RECREATE),
        (KafkaError(KafkaError._GAPLESS_GUARANTEE, fatal=True), Action.RECREATE),
        (FENCED, Action.STOP),
        (KafkaError(KafkaError.PRODUCER_FENCED, fatal=True), Action.STOP),
        (KafkaError(KafkaError.INVALID_PRODUCER_EPOCH, fatal=True), Action.STOP),
        (KafkaError(KafkaError.INVALID_PRODUCER_EPOCH, txn_requires_abort=True), Action.ABORT),
        (KafkaError(KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, fatal=True), Action.STOP),
    ],
)
def test_each_error_class_has_its_way_on(error: KafkaError, expected: Action) -> None:
    assert action(error) is expected


def test_an_abortable_error_aborts_with_the_same_producer() -> None:
    txn, made = transactional()
    txn.recover(BUMP)
    assert len(made) == 1
    assert made[0].aborts == 1


def test_a_retriable_abort_is_retried() -> None:
    txn, made = transactional(KafkaError(KafkaError._TIMED_OUT, retriable=True))
    txn.recover(ERRONEOUS)
    assert len(made) == 1
    assert made[0].aborts == 2


def test_an_abort_that_fails_re_creates_the_producer() -> None:
    txn, made = transactional(KafkaError(KafkaError._STATE, "Erroneous state", fatal=True))
    txn.recover(ERRONEOUS)
    assert len(made) == 2
    assert txn.producer is cast(Any, made[1])
    assert made[0].purges == 1
    assert made[1].inits == 1


def test_a_fatal_producer_is_re_created_without_an_abort() -> None:
    txn, made = transactional()
    txn.recover(FATAL_IDEMPOTENCE)
    assert made[0].aborts == 0
    assert len(made) == 2
    assert txn.producer is cast(Any, made[1])


@pytest.mark.parametrize("abort_error", [None, FENCED])
def test_fencing_stops(abort_error: KafkaError | None) -> None:
    txn, made = transactional(*([abort_error] if abort_error else []))
    with pytest.raises(KafkaException):
        txn.recover(FENCED if abort_error is None else BUMP)
    assert len(made) == 1
