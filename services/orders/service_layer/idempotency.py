"""Idempotency-Key handling (IETF draft, contract section 3): scopes, fingerprints, outcomes."""

import hashlib
from dataclasses import dataclass
from typing import Literal

import orjson

Kind = Literal["created", "changed", "rejected", "not_found", "replayed", "mismatch"]


@dataclass(frozen=True)
class KeyClaim:
    """A client's key for one endpoint (`scope`) and what its request looked like."""

    scope: str
    key: str
    fingerprint: bytes


@dataclass(frozen=True)
class Outcome:
    """What a write answered: status and body are what a replay of the key returns."""

    kind: Kind
    status: int
    body: bytes

    @property
    def replayed(self) -> bool:
        """True when this answer is the stored answer of an earlier request."""
        return self.kind == "replayed"


class IdempotencyKeyReusedError(Exception):
    """The key was first used with a different request (answered 422)."""


class RequestInFlightError(Exception):
    """A request with the same key has not completed yet (answered 409)."""


def claim(scope: str, key: str, request: object) -> KeyClaim:
    """Fingerprint `request` (any JSON-able value) canonically, whitespace and key order aside."""
    canonical = orjson.dumps(request, option=orjson.OPT_SORT_KEYS)
    return KeyClaim(scope=scope, key=key, fingerprint=hashlib.sha256(canonical).digest())
