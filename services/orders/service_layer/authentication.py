"""Who is calling: a key's client, verified in the database and trusted for at most `ttl_s`
per worker (so a revocation takes effect within that time on every worker, and an expiry at
its time). A key the database did not know is remembered as unknown for `unknown_ttl_s`, for
at most `unknown_size` keys (least recently seen forgotten first), so repeating it costs no
query. No issued key can be among them: a key is random and nobody has it before it exists."""

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from time import monotonic

from services.orders.domain.api_keys import Client

# The client of a live key and the seconds until the key expires (None: never), or None.
Lookup = Callable[[bytes], Awaitable[tuple[Client, float | None] | None]]


@dataclass
class KeyCache:
    """This worker's verdicts on keys, by their hash: verified clients and unknown keys."""

    ttl_s: float
    unknown_ttl_s: float
    unknown_size: int
    clock: Callable[[], float] = monotonic
    entries: dict[bytes, tuple[Client, float]] = field(default_factory=dict)
    unknown: OrderedDict[bytes, float] = field(default_factory=OrderedDict)

    def known(self, digest: bytes) -> Client | None:
        """The client of a key verified less than ttl_s ago (and not expired since), or None."""
        cached = self.entries.get(digest)
        if cached is not None and cached[1] > self.clock():
            return cached[0]
        return None

    def verified_before(self, digest: bytes) -> bool:
        """True when the database knew this key at its last lookup by this worker (its entry
        may have aged out since; a lookup that finds it unknown forgets it)."""
        return digest in self.entries

    def known_unknown(self, digest: bytes) -> bool:
        """True when the database did not know this key less than unknown_ttl_s ago."""
        until = self.unknown.get(digest)
        if until is None:
            return False
        if until > self.clock():
            self.unknown.move_to_end(digest)
            return True
        del self.unknown[digest]
        return False

    async def look_up(self, digest: bytes, lookup: Lookup) -> Client | None:
        """Ask the database (one query) and remember its answer."""
        found = await lookup(digest)
        now = self.clock()
        if found is None:
            self.entries.pop(digest, None)
            self.unknown[digest] = now + self.unknown_ttl_s
            self.unknown.move_to_end(digest)
            while len(self.unknown) > self.unknown_size:
                self.unknown.popitem(last=False)
            return None
        client, expires_in_s = found
        until = now + self.ttl_s
        if expires_in_s is not None:
            until = min(until, now + expires_in_s)
        self.entries[digest] = (client, until)
        return client
