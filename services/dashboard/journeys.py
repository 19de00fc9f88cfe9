"""Where an order's journey comes from: `services.ops.journey` (the same lookup as the ops CLI)."""

import importlib
from collections.abc import Callable
from typing import Any, Protocol
from uuid import UUID

from onceflow.settings import Settings

JourneyLookup = Callable[[UUID], dict[str, Any] | None]


class _Journey(Protocol):
    def as_dict(self) -> dict[str, Any]: ...


def ops_lookup(settings: Settings) -> JourneyLookup:
    """A lookup by `services.ops.journey.journey(settings=..., order_id=...)`; blocking."""

    def lookup(order_id: UUID) -> dict[str, Any] | None:
        # Imported when first used: the dashboard's page and plots need none of its clients.
        module = importlib.import_module("services.ops.journey")
        found: _Journey | None = module.journey(settings=settings, order_id=str(order_id))
        return None if found is None else found.as_dict()

    return lookup
