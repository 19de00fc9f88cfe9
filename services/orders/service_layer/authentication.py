"""Who is calling: a key's client, verified in the database and trusted for at most `ttl_s`
per worker (so a revocation takes effect within that time on every worker)."""

from collections.abc import Callable
from dataclasses import dataclass, field
from time import monotonic

from services.orders.adapters.clients import fetch_client
from services.orders.adapters.pool import Pool
from services.orders.domain.api_keys import Client, key_hash


@dataclass
class KeyCache:
    """Verified keys of this worker, by hash; unknown keys are never cached."""

    ttl_s: float
    clock: Callable[[], float] = monotonic
    entries: dict[bytes, tuple[Client, float]] = field(default_factory=dict)

    async def client_for(self, *, pool: Pool, key: str) -> Client | None:
        """The key's client, or None when the key is unknown or revoked."""
        digest = key_hash(key)
        now = self.clock()
        cached = self.entries.get(digest)
        if cached is not None and cached[1] > now:
            return cached[0]
        async with pool.connection() as conn:
            client = await fetch_client(conn, digest)
        if client is None:
            self.entries.pop(digest, None)
        else:
            self.entries[digest] = (client, now + self.ttl_s)
        return client
