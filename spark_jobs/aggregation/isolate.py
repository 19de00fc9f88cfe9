"""Apply a batch's items in pieces, each under a savepoint of the caller's transaction: a piece the
database refuses for a data reason (sqlstates.py) is rolled back to its savepoint and split in
two, down to the single items it refuses, each with the database's message. Every other item is
applied once, in order; any other failure propagates (the caller's transaction rolls back).

Pieces are applied one after the other, so a refusal that only a combination of items causes
(e.g. a sum beyond a column's range) ends on the item that tips it over. With k refused items
among n, about 2k·log2(n) pieces are tried. More than MOST_REFUSED items (or 1 % of them) refused
is not bad records but a systemic fault (a constraint every row breaks): the isolation stops and
raises, so the batch fails as any infrastructure failure does, and nothing is dead-lettered.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg

from spark_jobs.aggregation import sqlstates

Conn = psycopg.Connection[Any]
T = TypeVar("T")
MOST_REFUSED = 10


class TooManyRefusedError(RuntimeError):
    """The database refused more of a batch than bad records explain."""


@dataclass(frozen=True)
class Refusal:
    """Item `index` was refused by the database, for `reason` (the dead letter's error)."""

    index: int
    reason: str


def reason(exc: psycopg.Error) -> str:
    """The database's message for a refused record, with its SQLSTATE."""
    message = exc.diag.message_primary or str(exc)
    if exc.sqlstate is None:  # refused by the client library before it reached the server
        return f"refused by the database client: {message}"
    return f"refused by the database (SQLSTATE {exc.sqlstate}): {message}"


def pieces(conn: Conn, count: int, apply: Callable[[int, int], T]) -> tuple[list[T], list[Refusal]]:
    """Apply items [0, count) as pieces `apply(start, stop)`; (what each applied piece returned,
    in order; the items refused)."""
    applied: list[T] = []
    refused: list[Refusal] = []
    pending = [(0, count)] if count else []
    while pending:
        start, stop = pending.pop()
        try:
            with conn.transaction():
                result = apply(start, stop)
        except psycopg.Error as exc:
            if not sqlstates.psycopg_is_data(exc):
                raise
            if stop - start == 1:
                refused.append(Refusal(start, reason(exc)))
                if len(refused) > max(MOST_REFUSED, count // 100):
                    raise TooManyRefusedError(
                        f"the database refused more than {len(refused) - 1} of {count} items"
                        f" ({refused[-1].reason}): a systemic fault, not bad records; nothing"
                        " was dead-lettered"
                    ) from exc
            else:
                middle = (start + stop) // 2
                pending += [(middle, stop), (start, middle)]
            continue
        applied.append(result)
    return applied, refused
