"""Idempotency-Key claims (IETF draft, contract section 3): scopes and request fingerprints."""

import hashlib
from uuid import UUID

import orjson

from onceflow.contract import Action
from services.orders.domain.commands import KeyClaim

PLACE_SCOPE = "POST /orders"


def transition_scope(action: Action) -> str:
    """The Idempotency-Key scope of a transition endpoint."""
    return f"POST /orders/{{id}}/{action.value}"


def claim(scope: str, key: str, request: object, *, client_id: UUID) -> KeyClaim:
    """The key, scoped to the client and the endpoint (`<client id> <endpoint>`), with `request`
    (any JSON-able value) fingerprinted canonically, whitespace and key order aside."""
    canonical = orjson.dumps(request, option=orjson.OPT_SORT_KEYS)
    return KeyClaim(
        scope=f"{client_id} {scope}", key=key, fingerprint=hashlib.sha256(canonical).digest()
    )
