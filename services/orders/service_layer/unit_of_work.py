"""Unit of work: one database transaction that rolls back unless explicitly committed."""

from types import TracebackType
from typing import Protocol, Self

from services.orders.adapters.pool import Connection, Pool
from services.orders.adapters.repository import PsycopgOrderRepository
from services.orders.domain.commands import PlaceOrder, TransitionOrder
from services.orders.domain.outcomes import Outcome


class OrderRepository(Protocol):
    """Writes of the order aggregate; each also claims its Idempotency-Key."""

    async def place(self, command: PlaceOrder) -> Outcome: ...

    async def transition(self, command: TransitionOrder) -> Outcome: ...


class UnitOfWork(Protocol):
    """A transaction around the repository: commit() or everything is rolled back."""

    orders: OrderRepository

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def commit(self) -> None: ...


class PsycopgUnitOfWork:
    """Borrows a pooled (autocommit) connection and wraps the work in BEGIN ... COMMIT."""

    orders: OrderRepository

    def __init__(self, pool: Pool, *, wait_ms: int, problems: str) -> None:
        self._pool = pool
        self._wait_ms = wait_ms
        self._problems = problems
        self._conn: Connection | None = None
        self._committed = False

    async def __aenter__(self) -> Self:
        self._conn = await self._pool.getconn()
        self._committed = False
        try:
            await self._conn.execute("BEGIN")
        except BaseException:
            await self._pool.putconn(self._conn)
            raise
        self.orders = PsycopgOrderRepository(
            self._conn, wait_ms=self._wait_ms, problems=self._problems
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._conn is not None
        conn, self._conn = self._conn, None
        try:
            if not self._committed and not conn.broken:
                await conn.execute("ROLLBACK")
        finally:
            await self._pool.putconn(conn)

    async def commit(self) -> None:
        """Make the work durable."""
        assert self._conn is not None
        await self._conn.execute("COMMIT")
        self._committed = True
