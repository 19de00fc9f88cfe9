"""API clients for tests: each test session or module creates its own (never local-dev)."""

import uuid

from onceflow.client_keys import Issued, create_client
from onceflow.contract import Scope
from onceflow.settings import Settings


def new_client(
    settings: Settings, *scopes: Scope, rate_per_s: float | None = None, name: str = "test"
) -> Issued:
    """A fresh client (both scopes unless named) with one key."""
    return create_client(
        settings=settings,
        name=f"{name}-{uuid.uuid4().hex[:12]}",
        scopes=scopes or tuple(Scope),
        rate_per_s=rate_per_s,
    )


def bearer(issued: Issued) -> dict[str, str]:
    """The Authorization header of the client's key."""
    return {"Authorization": f"Bearer {issued.key}"}
