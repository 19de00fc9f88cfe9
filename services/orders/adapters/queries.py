"""Read queries: the database renders each order as JSON, exactly as writes return it."""

from datetime import datetime
from uuid import UUID

from psycopg import sql

from services.orders.adapters.pool import Connection

ORDER_JSON = sql.SQL("orders.order_json(o, orders.items_json(o.id))::text")
GET = sql.SQL("SELECT {} FROM orders.orders o WHERE o.id = %s").format(ORDER_JSON)


async def fetch_order(conn: Connection, order_id: UUID) -> str | None:
    """The order's JSON text, or None."""
    cur = await conn.execute(GET, (order_id,))
    row = await cur.fetchone()
    return None if row is None else str(row[0])


async def fetch_page(
    conn: Connection,
    *,
    customer_id: str | None,
    status: str | None,
    after: tuple[datetime, UUID] | None,
    limit: int,
) -> list[tuple[str, datetime, UUID]]:
    """Up to `limit` orders newest first, after the keyset position `after`."""
    where: list[sql.Composable] = []
    params: list[object] = []
    if customer_id is not None:
        where.append(sql.SQL("o.customer_id = %s"))
        params.append(customer_id)
    if status is not None:
        where.append(sql.SQL("o.status = %s"))
        params.append(status)
    if after is not None:
        where.append(sql.SQL("(o.created_at, o.id) < (%s, %s)"))
        params.extend(after)
    condition = sql.SQL(" AND ").join(where) if where else sql.SQL("true")
    query = sql.SQL(
        "SELECT {}, o.created_at, o.id FROM orders.orders o WHERE {} "
        "ORDER BY o.created_at DESC, o.id DESC LIMIT %s"
    ).format(ORDER_JSON, condition)
    cur = await conn.execute(query, [*params, limit])
    rows = await cur.fetchall()
    return [(str(doc), created_at, order_id) for doc, created_at, order_id in rows]  # type: ignore[misc]
