"""Looking up the client of an API key (services/orders/adapters/sql/authenticate.sql)."""

import hmac
import typing
from pathlib import Path
from uuid import UUID

from services.orders.adapters.pool import Connection, Pool
from services.orders.domain.api_keys import Client

AUTHENTICATE = (Path(__file__).parent / "sql" / "authenticate.sql").read_text()
Row = tuple[bytes, UUID, list[str], float | None, float | None]


async def fetch_client(conn: Connection, key_hash: bytes) -> tuple[Client, float | None] | None:
    """The client whose live key hashes to `key_hash` and the seconds until that key expires
    (None: never), or None (unknown, revoked or expired)."""
    cur = await conn.execute(AUTHENTICATE, {"key_hash": key_hash})
    row = typing.cast(Row | None, await cur.fetchone())
    if row is None:
        return None
    stored, client_id, scopes, rate_per_s, expires_in_s = row
    # The index lookup matched the hash already; compare again in constant time regardless.
    if not hmac.compare_digest(stored, key_hash):
        return None
    return Client(id=client_id, scopes=frozenset(scopes), rate_per_s=rate_per_s), expires_in_s


def lookup_in(
    pool: Pool,
) -> typing.Callable[[bytes], typing.Awaitable[tuple[Client, float | None] | None]]:
    """fetch_client on a connection of `pool`: the KeyCache's lookup."""

    async def lookup(key_hash: bytes) -> tuple[Client, float | None] | None:
        async with pool.connection() as conn:
            return await fetch_client(conn, key_hash)

    return lookup
