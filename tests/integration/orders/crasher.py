"""A client that dies before it commits: places an order in an open transaction, prints its
backend pid and the order id, then waits to be killed (test_idempotency_in_flight.py).

    python -m tests.integration.orders.crasher CLIENT_ID KEY CUSTOMER_ID
"""

import asyncio
import sys
from uuid import UUID

import psycopg

from onceflow.settings import get_settings
from services.orders.adapters.repository import PsycopgOrderRepository
from services.orders.domain.order import LineItem
from services.orders.entrypoints.problems import STORED
from services.orders.entrypoints.tracing import new_traceparent
from services.orders.service_layer.services import place_command

ITEMS = (LineItem("SKU-1", 2, 1250),)


async def main(client_id: UUID, key: str, customer_id: str) -> None:
    """Write as the unit of work does (BEGIN, then one call), and never COMMIT."""
    command = place_command(
        client_id=client_id,
        key=key,
        customer_id=customer_id,
        currency="EUR",
        items=ITEMS,
        traceparent=new_traceparent(),
    )
    conn = await psycopg.AsyncConnection.connect(get_settings().dsn("app"), autocommit=True)
    await conn.execute("BEGIN")
    outcome = await PsycopgOrderRepository(conn, wait_ms=50, problems=STORED).place(command)
    assert outcome.kind == "created", outcome
    print(conn.info.backend_pid, command.order_id, flush=True)
    await asyncio.sleep(120)


if __name__ == "__main__":
    asyncio.run(main(UUID(sys.argv[1]), sys.argv[2], sys.argv[3]))
