"""Read queries, built with SQLAlchemy Core from onceflow.schema and compiled once per shape.
The database renders each order as JSON (orders.order_json), exactly as writes return it."""

import typing
from datetime import datetime
from functools import cache
from uuid import UUID

from sqlalchemy import ColumnElement, Text, bindparam, cast, func, literal_column, select, tuple_

from onceflow.schema.orders import orders
from services.orders.adapters.compiled import to_sql
from services.orders.adapters.pool import Connection

o = orders.alias("o")
ORDER_JSON = cast(func.orders.order_json(literal_column("o"), func.orders.items_json(o.c.id)), Text)
OWN = o.c.client_id == bindparam("client_id")  # a client sees only its own orders
GET = to_sql(select(ORDER_JSON).where(o.c.id == bindparam("id"), OWN))


@cache
def page_query(*, by_customer: bool, by_status: bool, after: bool) -> str:
    """The list query for one combination of filters (eight shapes, each compiled once)."""
    where: list[ColumnElement[bool]] = [OWN]
    if by_customer:
        where.append(o.c.customer_id == bindparam("customer_id"))
    if by_status:
        where.append(o.c.status == bindparam("status"))
    if after:
        where.append(
            tuple_(o.c.created_at, o.c.id) < tuple_(bindparam("after_at"), bindparam("after_id"))
        )
    return to_sql(
        select(ORDER_JSON, o.c.created_at, o.c.id)
        .where(*where)
        .order_by(o.c.created_at.desc(), o.c.id.desc())
        .limit(bindparam("limit"))
    )


async def fetch_order(conn: Connection, *, client_id: UUID, order_id: UUID) -> str | None:
    """The client's order as JSON text, or None (no such order, or another client's)."""
    row = await (await conn.execute(GET, {"id": order_id, "client_id": client_id})).fetchone()
    return None if row is None else str(row[0])


async def fetch_page(
    conn: Connection,
    *,
    client_id: UUID,
    customer_id: str | None,
    status: str | None,
    after: tuple[datetime, UUID] | None,
    limit: int,
) -> list[tuple[str, datetime, UUID]]:
    """Up to `limit` of the client's orders newest first, after the keyset position `after`."""
    query = page_query(
        by_customer=customer_id is not None, by_status=status is not None, after=after is not None
    )
    params: dict[str, object] = {
        "client_id": client_id,
        "customer_id": customer_id,
        "status": status,
        "limit": limit,
    }
    if after is not None:
        params["after_at"], params["after_id"] = after
    cur = await conn.execute(query, params)
    rows = typing.cast(list[tuple[str, datetime, UUID]], await cur.fetchall())
    return [(str(doc), created_at, order_id) for doc, created_at, order_id in rows]
