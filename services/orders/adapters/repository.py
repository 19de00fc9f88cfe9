"""psycopg repository: each write command is ONE statement calling a server-side function
(migrations/sql/orders/), with named arguments."""

from typing import Any, cast

import orjson
import psycopg
from psycopg import errors
from sqlalchemy import ColumnElement, Text, literal_column, select, text
from sqlalchemy import cast as sql_cast

from onceflow.contract import TRANSITIONS
from services.orders.adapters.compiled import to_sql
from services.orders.domain.commands import KeyClaim, PlaceOrder, TransitionOrder
from services.orders.domain.order import total_cents
from services.orders.domain.outcomes import Kind, Outcome, RequestInFlightError

CLAIM = ("scope", "key", "fingerprint", "lock_timeout")
PLACE_ARGS = (
    *CLAIM,
    "order_id",
    "event_id",
    "customer_id",
    "currency",
    "items:jsonb",
    "total_cents",
    "traceparent",
)
TRANSITION_ARGS = (
    *CLAIM,
    "order_id",
    "action",
    "from",
    "to",
    "event_type",
    "event_id",
    "traceparent",
    "problems:jsonb",
)


def call(function: str, args: tuple[str, ...]) -> str:
    """`SELECT outcome, status, body::text FROM <function>(p_<arg> => %(<arg>)s, ...)`."""
    named: list[str] = []
    for arg in args:
        name, _, pg_type = arg.partition(":")
        value = f"CAST(:{name} AS {pg_type})" if pg_type else f":{name}"
        named.append(f"p_{name} => {value}")
    columns: tuple[ColumnElement[Any], ...] = (
        literal_column("outcome"),
        literal_column("status"),
        sql_cast(literal_column("body"), Text),
    )
    return to_sql(select(*columns).select_from(text(f"{function}({', '.join(named)})")))


PLACE = call("orders.place_order", PLACE_ARGS)
TRANSITION = call("orders.transition_order", TRANSITION_ARGS)


def _claim(claim: KeyClaim, lock_timeout: str) -> dict[str, Any]:
    return {
        "scope": claim.scope,
        "key": claim.key,
        "fingerprint": claim.fingerprint,
        "lock_timeout": lock_timeout,
    }


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
        items = [vars(item) for item in command.items]
        return await self._call(
            PLACE,
            {
                **_claim(command.claim, self._lock_timeout),
                "order_id": command.order_id,
                "event_id": command.event_id,
                "customer_id": command.customer_id,
                "currency": command.currency,
                "items": orjson.dumps(items).decode(),
                "total_cents": total_cents(command.items),
                "traceparent": command.traceparent,
            },
        )

    async def transition(self, command: TransitionOrder) -> Outcome:
        """Claim the key and apply the action if the order's status allows it (or replay)."""
        rule = TRANSITIONS[command.action]
        return await self._call(
            TRANSITION,
            {
                **_claim(command.claim, self._lock_timeout),
                "order_id": command.order_id,
                "action": command.action.value,
                "from": [s.value for s in rule.sources],
                "to": rule.target.value,
                "event_type": rule.event_type.value,
                "event_id": command.event_id,
                "traceparent": command.traceparent,
                "problems": self._problems,
            },
        )

    async def _call(self, query: str, params: dict[str, Any]) -> Outcome:
        try:
            cur = await self._conn.execute(query, params)
        except errors.LockNotAvailable as exc:
            raise RequestInFlightError from exc
        return outcome_of(await cur.fetchone())
