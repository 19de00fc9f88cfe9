"""What a write answered, and the two ways an Idempotency-Key can refuse a request."""

from dataclasses import dataclass
from typing import Literal

Kind = Literal["created", "changed", "rejected", "not_found", "replayed", "mismatch"]


@dataclass(frozen=True)
class Outcome:
    """A write's answer: status and body are what a replay of the key returns (no body only
    for a key reused with another request, which is answered 422 instead)."""

    kind: Kind
    status: int
    body: bytes | None

    @property
    def replayed(self) -> bool:
        """True when this answer is the stored answer of an earlier request."""
        return self.kind == "replayed"


class IdempotencyKeyReusedError(Exception):
    """The key was first used with a different request (answered 422)."""


class RequestInFlightError(Exception):
    """A request with the same key has not completed yet (answered 409)."""
