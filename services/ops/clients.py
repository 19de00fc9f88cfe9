"""API clients and their keys, as ops manage them: the command line's scopes and durations, a
client by name or id, its rate, revoking. Issuing a client or key: onceflow/client_keys.py; what
ops read about clients: services/ops/client_queries.py."""

import re
from datetime import timedelta
from uuid import UUID

from onceflow.client_keys import ClientError, check_rate, connect
from onceflow.contract import Scope
from onceflow.settings import Settings


def parse_scopes(text: str) -> tuple[str, ...]:
    """`orders:write,orders:read` as scopes; an unknown one is a ClientError."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in names if name not in set(Scope)]
    if unknown or not names:
        allowed = ", ".join(Scope)
        raise ClientError(f"unknown scope {', '.join(unknown) or '(none)'}: use {allowed}")
    return names


_DURATION = re.compile(r"(\d+)([smhdw])")
# The longest expiry or overlap a command takes: beyond it, "never" is what is meant.
LONGEST = timedelta(days=3650)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(text: str) -> timedelta:
    """`90s`, `30m`, `24h`, `7d`, `2w` (or a sum of them: `1h30m`); anything else is a
    ClientError."""
    compact = text.strip().replace(" ", "")
    parts = _DURATION.findall(compact)
    if not parts or "".join(n + u for n, u in parts) != compact:
        raise ClientError(f"{text!r} is not a duration: use e.g. 90s, 30m, 24h, 7d, 2w or 1h30m")
    try:
        total = sum((timedelta(**{_UNITS[unit]: int(n)}) for n, unit in parts), timedelta())
    except OverflowError:
        total = timedelta.max
    if total > LONGEST:
        raise ClientError(f"{text!r} is too long: at most {LONGEST.days}d (omit it for never)")
    return total


def resolve(*, settings: Settings, client: str) -> UUID:
    """The live client `client` names: its id, or its name."""
    try:
        client_id: UUID | None = UUID(client)
    except ValueError:
        client_id = None
    with connect(settings) as conn:
        row = conn.execute(
            "SELECT id FROM orders.clients WHERE revoked_at IS NULL AND (id = %s OR name = %s)",
            (client_id, client),
        ).fetchone()
    if row is None:
        raise ClientError(f"no live client {client} (give its name or its id)")
    return UUID(str(row[0]))


def set_rate(*, settings: Settings, client_id: UUID, rate_per_s: float | None) -> None:
    """Set a live client's requests/s, or None for the API's default (every API worker uses it
    within 1 s, as it re-reads keys)."""
    check_rate(rate_per_s)
    with connect(settings) as conn:
        found = conn.execute(
            "UPDATE orders.clients SET rate_per_s = %s WHERE id = %s AND revoked_at IS NULL",
            (rate_per_s, client_id),
        ).rowcount
    if not found:
        raise ClientError(f"no live client {client_id}")


def revoke(*, settings: Settings, client_id: UUID, old_keys_only: bool = False) -> int:
    """Revoke the client and all its keys, or (the end of a rotation) all but its newest key;
    return how many keys stopped working."""
    with connect(settings) as conn:
        if not old_keys_only:
            found = conn.execute(
                "UPDATE orders.clients SET revoked_at = now() WHERE id = %s AND revoked_at IS NULL",
                (client_id,),
            ).rowcount
            if not found:
                raise ClientError(f"no live client {client_id}")
        return conn.execute(
            "UPDATE orders.api_keys k SET revoked_at = now() WHERE k.client_id = %(id)s "
            "AND k.revoked_at IS NULL AND (NOT %(old)s OR k.created_at < "
            "(SELECT max(created_at) FROM orders.api_keys WHERE client_id = %(id)s))",
            {"id": client_id, "old": old_keys_only},
        ).rowcount
