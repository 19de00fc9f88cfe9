"""Looking up the client of an API key (services/orders/adapters/sql/authenticate.sql)."""

import hmac
import typing
from pathlib import Path
from uuid import UUID

from services.orders.adapters.pool import Connection
from services.orders.domain.api_keys import Client

AUTHENTICATE = (Path(__file__).parent / "sql" / "authenticate.sql").read_text()
Row = tuple[bytes, UUID, list[str], float | None]


async def fetch_client(conn: Connection, key_hash: bytes) -> Client | None:
    """The client whose live key hashes to `key_hash`, or None (unknown or revoked)."""
    cur = await conn.execute(AUTHENTICATE, {"key_hash": key_hash})
    row = typing.cast(Row | None, await cur.fetchone())
    if row is None:
        return None
    stored, client_id, scopes, rate_per_s = row
    # The index lookup matched the hash already; compare again in constant time regardless.
    if not hmac.compare_digest(stored, key_hash):
        return None
    return Client(id=client_id, scopes=frozenset(scopes), rate_per_s=rate_per_s)
