"""Where an order's journey comes from: `services.ops.journey` (the same lookup as
`onceflow-ops trace`), called with the dashboard's settings."""

from collections.abc import Callable
from typing import Any
from uuid import UUID

from onceflow.settings import Settings
from services.ops.journey import journey

JourneyLookup = Callable[[UUID], dict[str, Any] | None]


def ops_lookup(settings: Settings) -> JourneyLookup:
    """A blocking lookup by `services.ops.journey.journey(settings=..., order_id=...)`."""

    def lookup(order_id: UUID) -> dict[str, Any] | None:
        found = journey(settings=settings, order_id=str(order_id))
        return None if found is None else found.as_dict()

    return lookup
