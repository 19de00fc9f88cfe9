"""Read side: single autocommit statements, no unit of work needed."""

from uuid import UUID

import orjson

from services.orders.adapters import queries
from services.orders.adapters.pool import Pool
from services.orders.service_layer import pagination


async def get_order(*, pool: Pool, client_id: UUID, order_id: UUID) -> bytes | None:
    """Return one of the client's orders as JSON bytes, or None when it has no such order."""
    async with pool.connection() as conn:
        doc = await queries.fetch_order(conn, client_id=client_id, order_id=order_id)
    return None if doc is None else doc.encode()


async def list_orders(
    *,
    pool: Pool,
    client_id: UUID,
    customer_id: str | None,
    status: str | None,
    limit: int,
    cursor: str | None,
) -> bytes:
    """Return a page of the client's orders `{"items": [...], "next_cursor": ...}`, newest
    first."""
    after = None
    if cursor is not None:
        position = pagination.decode(cursor)
        after = (position.created_at, position.order_id)
    async with pool.connection() as conn:
        rows = await queries.fetch_page(
            conn,
            client_id=client_id,
            customer_id=customer_id,
            status=status,
            after=after,
            limit=limit + 1,
        )
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        _, created_at, order_id = rows[-1]
        next_cursor = pagination.encode(pagination.Cursor(created_at, order_id))
    items = ",".join(doc for doc, _, _ in rows)
    return b'{"items":[' + items.encode() + b'],"next_cursor":' + orjson.dumps(next_cursor) + b"}"
