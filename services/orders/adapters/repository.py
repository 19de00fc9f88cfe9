"""psycopg repository: every write is ONE statement calling a server-side function."""

from typing import LiteralString, cast
from uuid import UUID

import orjson
import psycopg
from psycopg import errors

from services.orders.domain.order import LineItem, total_cents
from services.orders.domain.status import TRANSITIONS, Action
from services.orders.service_layer.idempotency import (
    KeyClaim,
    Kind,
    Outcome,
    RequestInFlightError,
)

PLACE: LiteralString = (
    "SELECT outcome, status, body::text FROM orders.place_order("
    "%s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s)"
)
TRANSITION: LiteralString = (
    "SELECT outcome, status, body::text FROM orders.transition_order("
    "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


class PsycopgOrderRepository:
    """Order writes on one connection, inside the unit of work's transaction."""

    def __init__(self, conn: psycopg.AsyncConnection[tuple[object, ...]], wait_ms: int) -> None:
        self._conn = conn
        self._lock_timeout = f"{wait_ms}ms"

    async def place(
        self,
        *,
        claim: KeyClaim,
        order_id: UUID,
        event_id: UUID,
        customer_id: str,
        currency: str,
        items: tuple[LineItem, ...],
        traceparent: str,
    ) -> Outcome:
        """Claim the key and insert order, items and OrderPlaced event (or replay)."""
        items_json = orjson.dumps(
            [
                {"sku": i.sku, "quantity": i.quantity, "unit_price_cents": i.unit_price_cents}
                for i in items
            ]
        ).decode()
        params = (
            claim.scope,
            claim.key,
            claim.fingerprint,
            self._lock_timeout,
            order_id,
            event_id,
            customer_id,
            currency,
            items_json,
            total_cents(items),
            traceparent,
        )
        return await self._call(PLACE, params)

    async def transition(
        self,
        *,
        claim: KeyClaim,
        order_id: UUID,
        action: Action,
        event_id: UUID,
        traceparent: str,
    ) -> Outcome:
        """Claim the key and apply `action` if the current status allows it (or replay)."""
        rule = TRANSITIONS[action]
        params = (
            claim.scope,
            claim.key,
            claim.fingerprint,
            self._lock_timeout,
            order_id,
            action.value,
            [s.value for s in rule.sources],
            rule.target.value,
            rule.event_type.value,
            event_id,
            traceparent,
        )
        return await self._call(TRANSITION, params)

    async def _call(self, query: LiteralString, params: tuple[object, ...]) -> Outcome:
        try:
            cur = await self._conn.execute(query, params)
        except errors.LockNotAvailable as exc:
            raise RequestInFlightError from exc
        row = await cur.fetchone()
        if row is None:
            raise RuntimeError("the write function returned no row")
        kind, status, body = row
        return Outcome(kind=cast(Kind, kind), status=cast(int, status), body=str(body).encode())
