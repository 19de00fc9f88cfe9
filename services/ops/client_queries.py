"""What ops read about API clients: never a key, only whether one is live."""

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from uuid import UUID

from onceflow.settings import Settings
from services.ops.clients import connect
from services.orders.domain.api_keys import key_hash

LIST = (Path(__file__).parent / "sql" / "clients_list.sql").read_text()


@dataclass(frozen=True)
class ClientRow:
    """A client as `clients list` shows it: never a key."""

    id: UUID
    name: str
    scopes: list[str]
    rate_per_s: float | None
    created_at: datetime
    revoked_at: datetime | None
    live_keys: int
    last_used_at: datetime | None


def find_client(*, settings: Settings, name: str) -> UUID | None:
    """The live client called `name`, if any."""
    with connect(settings) as conn:
        row = conn.execute(
            "SELECT id FROM orders.clients WHERE name = %s AND revoked_at IS NULL", (name,)
        ).fetchone()
    return None if row is None else UUID(str(row[0]))


def is_live(*, settings: Settings, key: str) -> bool:
    """True when `key` is a live key (not revoked, not expired) of a live client."""
    with connect(settings) as conn:
        row = conn.execute(
            "SELECT 1 FROM orders.api_keys k JOIN orders.clients c ON c.id = k.client_id "
            "WHERE k.key_hash = %s AND k.revoked_at IS NULL AND c.revoked_at IS NULL "
            "AND (k.expires_at IS NULL OR k.expires_at > now())",
            (key_hash(key),),
        ).fetchone()
    return row is not None


def list_clients(*, settings: Settings) -> list[ClientRow]:
    """Every client, oldest first, with how many live keys it has and when one was last used."""
    with connect(settings) as conn:
        return [ClientRow(*row) for row in conn.execute(LIST).fetchall()]
