"""The key cache on an injected clock and lookup: a verified key is trusted for its TTL (never
past its expiry); an unknown key is remembered for its own TTL, for a bounded number of keys,
so repeating it costs no lookup."""

import asyncio
import uuid

from services.orders.domain.api_keys import Client
from services.orders.service_layer.authentication import KeyCache

CLIENT = Client(id=uuid.UUID(int=1), scopes=frozenset({"orders:read"}), rate_per_s=None)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Database:
    """Knows `known` (expiring after `expires_in_s`) and counts lookups."""

    def __init__(self, known: bytes = b"live", expires_in_s: float | None = None) -> None:
        self.known, self.expires_in_s, self.lookups = known, expires_in_s, 0

    async def __call__(self, digest: bytes) -> tuple[Client, float | None] | None:
        self.lookups += 1
        return (CLIENT, self.expires_in_s) if digest == self.known else None


def check(cache: KeyCache, db: Database, digest: bytes) -> Client | None:
    """What the authenticator does: cached verdicts first, then one lookup."""
    if (found := cache.known(digest)) is not None or cache.known_unknown(digest):
        return found
    return asyncio.run(cache.look_up(digest, db))


def test_an_unknown_key_repeated_costs_one_lookup_per_ttl() -> None:
    clock, db = Clock(), Database()
    cache = KeyCache(ttl_s=1, unknown_ttl_s=5, unknown_size=100, clock=clock)
    assert [check(cache, db, b"guess") for _ in range(1000)] == [None] * 1000
    assert db.lookups == 1
    clock.now += 5
    assert check(cache, db, b"guess") is None
    assert db.lookups == 2


def test_unknown_keys_are_bounded_least_recently_seen_first() -> None:
    clock, db = Clock(), Database()
    cache = KeyCache(ttl_s=1, unknown_ttl_s=60, unknown_size=3, clock=clock)
    for guess in (b"a", b"b", b"c"):
        check(cache, db, guess)
    check(cache, db, b"a")  # seen again: now the most recent
    check(cache, db, b"d")  # "b" is forgotten
    assert list(cache.unknown) == [b"c", b"a", b"d"]
    assert db.lookups == 4


def test_a_verified_key_is_trusted_for_the_ttl_but_not_past_its_expiry() -> None:
    clock = Clock()
    cache = KeyCache(ttl_s=1, unknown_ttl_s=5, unknown_size=10, clock=clock)
    lasting, expiring = Database(), Database(expires_in_s=0.25)
    assert check(cache, lasting, b"live") == CLIENT
    clock.now += 0.5
    assert check(cache, lasting, b"live") == CLIENT
    assert lasting.lookups == 1
    cache.entries.clear()
    assert check(cache, expiring, b"live") == CLIENT
    clock.now += 0.5  # past the key's expiry, within the TTL: asked again
    assert check(cache, expiring, b"live") == CLIENT
    assert expiring.lookups == 2
