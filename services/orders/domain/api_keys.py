"""Who a verified API key belongs to (the keys' format: onceflow/api_keys.py)."""

from dataclasses import dataclass
from uuid import UUID


@dataclass(frozen=True)
class Client:
    """Who a verified key belongs to: the client, its scopes and its own rate (None: default)."""

    id: UUID
    scopes: frozenset[str]
    rate_per_s: float | None
