"""What ops read about API clients: never a key."""

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from uuid import UUID

from onceflow.client_keys import connect
from onceflow.settings import Settings

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


def list_clients(*, settings: Settings) -> list[ClientRow]:
    """Every client, oldest first, with how many live keys it has and when one was last used."""
    with connect(settings) as conn:
        return [ClientRow(*row) for row in conn.execute(LIST).fetchall()]
