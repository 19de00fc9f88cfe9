"""Isolation's bound: a database that refuses more than bad records explain stops the isolation
(the batch fails as an infrastructure failure does) instead of dead-lettering the batch. The
bisection against a real database is in tests/integration/aggregation/test_isolation.py."""

import contextlib
from collections.abc import Iterator
from typing import Any, cast

import psycopg
import pytest

from spark_jobs.aggregation import isolate


class Savepoints:
    """Stands for a connection: each piece runs in `transaction()` (a savepoint)."""

    def __init__(self) -> None:
        self.rolled_back = 0

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        try:
            yield
        except psycopg.Error:
            self.rolled_back += 1
            raise


def _refusing(bad: set[int]) -> Any:
    def apply(start: int, stop: int) -> int:
        if bad & set(range(start, stop)):
            raise psycopg.errors.CheckViolation("new row violates check constraint")
        return stop - start

    return apply


def test_a_few_refused_items_are_isolated() -> None:
    conn = cast(isolate.Conn, Savepoints())
    applied, refused = isolate.pieces(conn, 500, _refusing({7, 300}))
    assert [r.index for r in refused] == [7, 300]
    assert sum(applied) == 498


def test_a_database_refusing_everything_stops_the_isolation() -> None:
    conn = cast(isolate.Conn, Savepoints())
    with pytest.raises(isolate.TooManyRefusedError, match="systemic fault"):
        isolate.pieces(conn, 500, _refusing(set(range(500))))


def test_the_bound_grows_with_the_batch() -> None:
    conn = cast(isolate.Conn, Savepoints())
    bad = set(range(0, 5000, 250))  # 20 of 5000: under 1 %
    _, refused = isolate.pieces(conn, 5000, _refusing(bad))
    assert len(refused) == 20
