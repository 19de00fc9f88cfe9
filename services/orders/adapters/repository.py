"""psycopg repository: each write command is ONE statement calling a server-side function
(adapters/calls.py), inside the unit of work's transaction."""

from typing import Any, cast

import psycopg
from psycopg import errors

from services.orders.adapters.calls import PLACE, TRANSITION, place_args, transition_args
from services.orders.domain.commands import PlaceOrder, TransitionOrder
from services.orders.domain.outcomes import Kind, Outcome, RequestInFlightError


def outcome_of(row: tuple[Any, ...] | None) -> Outcome:
    """The function's (outcome, status, body text) row as an Outcome; body stays None when
    the function stored none (a key reused with another request)."""
    if row is None:
        raise RuntimeError("the write function returned no row")
    kind, status, body = row
    return Outcome(
        kind=cast(Kind, kind), status=int(status), body=None if body is None else str(body).encode()
    )


class PsycopgOrderRepository:
    """Order writes on one connection, inside the unit of work's transaction."""

    def __init__(
        self, conn: psycopg.AsyncConnection[tuple[Any, ...]], *, wait_ms: int, problems: str
    ) -> None:
        self._conn = conn
        self._lock_timeout = f"{wait_ms}ms"
        self._problems = problems

    async def place(self, command: PlaceOrder) -> Outcome:
        """Claim the key and insert order, items and OrderPlaced event (or replay)."""
        return await self._call(PLACE, place_args(command, lock_timeout=self._lock_timeout))

    async def transition(self, command: TransitionOrder) -> Outcome:
        """Claim the key and apply the action if the order's status allows it (or replay)."""
        args = transition_args(command, lock_timeout=self._lock_timeout, problems=self._problems)
        return await self._call(TRANSITION, args)

    async def _call(self, query: str, args: dict[str, Any]) -> Outcome:
        try:
            cur = await self._conn.execute(query, args)
        except errors.LockNotAvailable as exc:
            raise RequestInFlightError from exc
        return outcome_of(await cur.fetchone())
