"""Which database failures are the data's fault (isolated) and which are the infrastructure's
(retried as before): SQLSTATE classes 22 and 23 only, from psycopg and from the Java chain of a
failed Spark job."""

from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from spark_jobs.aggregation import sqlstates

DATA = ["22001", "22003", "22021", "22P02", "22P05", "23502", "23503", "23514"]
NOT_DATA = [
    "23505",  # unique violation: only the bookkeeping's keys can clash (a writer's bug)
    "23P01",  # exclusion violation, likewise
    "08000",  # connection exception
    "08006",  # connection failure
    "57P01",  # admin shutdown (Postgres restarting)
    "57014",  # query canceled (statement timeout)
    "53100",  # disk full
    "53300",  # too many connections
    "40001",  # serialization failure
    "40P01",  # deadlock detected
    "42P01",  # undefined table
    "XX000",  # internal error
    "",
    "2",
    None,
]


@pytest.mark.parametrize("state", DATA)
def test_classes_22_and_23_are_the_data_s_fault(state: str) -> None:
    assert sqlstates.is_data_state(state)
    assert sqlstates.psycopg_is_data(psycopg.errors.lookup(state)("refused"))


@pytest.mark.parametrize("state", NOT_DATA)
def test_every_other_sqlstate_keeps_the_retry_path(state: str | None) -> None:
    assert not sqlstates.is_data_state(state)
    if state and len(state) == 5:
        assert not sqlstates.psycopg_is_data(psycopg.errors.lookup(state)("failed"))


def test_a_value_the_client_refuses_to_send_is_data_a_lost_connection_is_not() -> None:
    # psycopg refuses a NUL in text before it reaches the server: DataError, no SQLSTATE.
    assert sqlstates.psycopg_is_data(psycopg.DataError("text cannot contain NUL (0x00) bytes"))
    assert not sqlstates.psycopg_is_data(psycopg.OperationalError("connection lost"))
    assert not sqlstates.psycopg_is_data(psycopg.InterfaceError("the connection is closed"))


@dataclass
class Throwable:
    """A Java throwable as py4j shows it: a cause; an SQLException has a state and a next."""

    state: str | None = None
    cause: "Throwable | None" = None
    following: "Throwable | None" = None
    sql: bool = True

    def getCause(self) -> "Throwable | None":  # noqa: N802 (Java's name)
        return self.cause

    def getSQLState(self) -> str | None:  # noqa: N802
        return self.state

    def getNextException(self) -> "Throwable | None":  # noqa: N802
        return self.following


def spark_failure(*states: str | None) -> Throwable:
    """SparkException -> BatchUpdateException(first) -> its next exceptions, PSQLException."""
    batch = Throwable(states[0], cause=Throwable(states[-1]))
    last = batch
    for state in states[1:]:
        last.following = Throwable(state)
        last = last.following
    return Throwable(sql=False, cause=batch)


def states(throwable: Any) -> list[str | None]:
    return sqlstates.java_states(throwable, lambda t: bool(t.sql))


def test_a_spark_job_s_chain_is_data_only_when_every_sqlstate_in_it_is() -> None:
    assert states(spark_failure("23514", "23514")) == ["23514", "23514", "23514"]
    assert sqlstates.all_data(states(spark_failure("23514", "23514")))
    assert sqlstates.all_data(states(spark_failure("22021")))
    # A lost connection anywhere in it: not the data's fault.
    assert not sqlstates.all_data(states(spark_failure("23514", "08006")))
    assert not sqlstates.all_data(states(spark_failure(None)))
    # No SQLException at all (an executor lost, Kafka unreachable): not the data's fault.
    assert not sqlstates.all_data(states(Throwable(sql=False, cause=Throwable(sql=False))))


def test_a_cyclic_or_endless_chain_is_bounded() -> None:
    loop = Throwable("23514")
    loop.cause = loop
    loop.following = loop
    assert len(states(loop)) <= sqlstates.MAX_CHAIN


def test_an_exception_without_a_java_chain_is_not_data() -> None:
    assert not sqlstates.is_data_error(RuntimeError("something else"))
    assert sqlstates.is_data_error(psycopg.errors.CheckViolation("refused"))
    assert not sqlstates.is_data_error(psycopg.errors.AdminShutdown("restarting"))
