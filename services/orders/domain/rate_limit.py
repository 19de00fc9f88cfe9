"""A token bucket per client: `rate` tokens a second, at most `burst` saved up."""

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
