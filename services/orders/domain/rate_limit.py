"""Token buckets: `rate` tokens a second, at most `burst` saved up. One per client (its request
rate) and one per peer address (its failed authentications)."""

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from time import monotonic


@dataclass
class TokenBucket:
    """Refilled continuously from `clock`; each request takes one token."""

    rate: float
    burst: float
    clock: Callable[[], float] = monotonic
    tokens: float = field(init=False)
    updated: float = field(init=False)

    def __post_init__(self) -> None:
        self.tokens, self.updated = self.burst, self.clock()

    def take(self) -> float:
        """0 when a token was taken, else the seconds until one will be there."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate

    def give_back(self) -> None:
        """Return the token taken last (what it paid for turned out free)."""
        self.tokens = min(self.burst, self.tokens + 1)


@dataclass
class RateLimiter:
    """One bucket per client id, created on the client's first request."""

    burst_s: float
    clock: Callable[[], float] = monotonic
    buckets: dict[object, TokenBucket] = field(default_factory=dict)

    def wait(self, client: object, rate: float) -> float:
        """0 when `client` may go on, else the seconds until it may (the bucket follows `rate`
        if it changed)."""
        bucket = self.buckets.get(client)
        if bucket is None or bucket.rate != rate:
            bucket = TokenBucket(rate, max(1.0, rate * self.burst_s), self.clock)
            self.buckets[client] = bucket
        return bucket.take()


@dataclass
class PeerBudget:
    """Failed authentications per peer: a bucket of `burst` refilled at `rate` a second, for at
    most `peers` peers (the one seen least recently is forgotten first, its budget full again)."""

    rate: float
    burst: float
    peers: int = 10_000
    clock: Callable[[], float] = monotonic
    buckets: OrderedDict[str, TokenBucket] = field(default_factory=OrderedDict)

    def take(self, peer: str) -> float:
        """0 when `peer` may try once more, else the seconds until it may."""
        bucket = self.buckets.pop(peer, None) or TokenBucket(self.rate, self.burst, self.clock)
        self.buckets[peer] = bucket
        if len(self.buckets) > self.peers:
            self.buckets.popitem(last=False)
        return bucket.take()

    def give_back(self, peer: str) -> None:
        """The try succeeded: it does not count against the peer."""
        bucket = self.buckets.get(peer)
        if bucket is not None:
            bucket.give_back()
