"""Which database failures are a record's fault: SQLSTATE classes 22 (data exception: a value a
column refuses) and 23 (integrity constraint violation). Only those are isolated (isolate.py);
every other failure (class 08 connection lost, 57P01 admin shutdown, 53 insufficient resources,
40001/40P01 serialisation and deadlock, ...) keeps the retry-and-restart path: the batch fails,
Spark re-runs it, the ledger decides.

A failure is a data failure only when every SQLSTATE it carries is one: the psycopg error's (the
driver's folds), or each java.sql.SQLException in the chain of a failed Spark job (the executors'
JDBC staging: BatchUpdateException -> its next exceptions -> PSQLException).
"""

from collections.abc import Callable, Iterable
from typing import Any

import psycopg

DATA_CLASSES = frozenset({"22", "23"})
# Of class 23, not a record's fault: the fold adds to every reporting table with ON CONFLICT, so
# a unique or exclusion violation can only be on the job's bookkeeping keys (the ledger, the
# de-duplication set), written under aggregation.lock_writers(): a writer's bug, never data.
NOT_THE_DATA = frozenset({"23505", "23P01"})
# Causes and next exceptions followed in a Java chain (it may be long, never unbounded).
MAX_CHAIN = 32


def is_data_state(state: str | None) -> bool:
    """True for a SQLSTATE of class 22 or 23 (a unique or exclusion violation aside)."""
    return (
        state is not None
        and len(state) == 5
        and state[:2] in DATA_CLASSES
        and state not in NOT_THE_DATA
    )


def all_data(states: Iterable[str | None]) -> bool:
    """True when there is at least one SQLSTATE and every one is a data SQLSTATE."""
    seen = list(states)
    return bool(seen) and all(is_data_state(s) for s in seen)


def psycopg_is_data(exc: psycopg.Error) -> bool:
    """A psycopg error: the server's SQLSTATE, or a value the client refused to send (a NUL in
    text raises DataError before anything reaches the server)."""
    if exc.sqlstate is not None:
        return is_data_state(exc.sqlstate)
    return isinstance(exc, psycopg.DataError)


def java_states(throwable: Any, is_sql_exception: Callable[[Any], bool]) -> list[str | None]:
    """The SQLSTATEs of every java.sql.SQLException in a Java throwable's chain (causes, and
    each SQLException's next exceptions); `is_sql_exception` tells them apart."""
    states: list[str | None] = []
    for _ in range(MAX_CHAIN):
        if throwable is None:
            break
        if is_sql_exception(throwable):
            following = throwable
            while following is not None and len(states) < MAX_CHAIN:
                state = following.getSQLState()
                states.append(None if state is None else str(state))
                following = following.getNextException()
        throwable = throwable.getCause()
    return states


def _is_sql_exception(throwable: Any) -> bool:
    """True for a java.sql.SQLException of the driver's JVM (through py4j)."""
    from py4j.java_gateway import is_instance_of
    from pyspark import SparkContext

    return bool(is_instance_of(SparkContext._gateway, throwable, "java.sql.SQLException"))


def states_of(exc: BaseException) -> list[str | None]:
    """The SQLSTATEs a failure carries: a psycopg error's, or those in a failed Spark job's Java
    chain (py4j); none for any other failure."""
    if isinstance(exc, psycopg.Error):
        return [exc.sqlstate]
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    return [] if java is None else java_states(java, _is_sql_exception)


def is_data_error(exc: BaseException) -> bool:
    """True when `exc` (a psycopg error, or a failed Spark job) is a database's data failure."""
    if isinstance(exc, psycopg.Error):
        return psycopg_is_data(exc)
    return all_data(states_of(exc))
