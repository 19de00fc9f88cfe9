"""API clients and their keys, as ops manage them (the schema owner writes; the API only
reads). A key is returned once, when issued; the database keeps only its SHA-256. What ops
read about clients: services/ops/client_queries.py."""

import math
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID, uuid4

import psycopg

from onceflow.contract import Scope
from onceflow.settings import Settings
from services.orders.domain.api_keys import key_hash, new_key


class ClientError(ValueError):
    """A request ops can fix: said in one sentence."""


@dataclass(frozen=True)
class Issued:
    """A client and the key just issued to it (the only time the key is known)."""

    client_id: UUID
    name: str
    scopes: tuple[str, ...]
    key: str


def parse_scopes(text: str) -> tuple[str, ...]:
    """`orders:write,orders:read` as scopes; an unknown one is a ClientError."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in names if name not in set(Scope)]
    if unknown or not names:
        allowed = ", ".join(Scope)
        raise ClientError(f"unknown scope {', '.join(unknown) or '(none)'}: use {allowed}")
    return names


def connect(settings: Settings) -> psycopg.Connection[tuple[Any, ...]]:
    return psycopg.connect(settings.dsn("owner"))


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


def _issue(
    conn: psycopg.Connection[tuple[Any, ...]], client_id: UUID, expires_in: timedelta | None
) -> str:
    key = new_key()
    conn.execute(
        "INSERT INTO orders.api_keys (key_hash, client_id, expires_at) VALUES (%s, %s, now() + %s)",
        (key_hash(key), client_id, expires_in),
    )
    return key


def check_rate(rate_per_s: float | None) -> None:
    """A ClientError unless the rate is None (the API's default) or a positive number."""
    if rate_per_s is not None and not (math.isfinite(rate_per_s) and rate_per_s > 0):
        raise ClientError("the rate must be a positive number of requests a second")


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


def create_client(
    *,
    settings: Settings,
    name: str,
    scopes: Collection[str],
    rate_per_s: float | None = None,
    expires_in: timedelta | None = None,
) -> Issued:
    """A new client with one key (expiring after `expires_in`, or never). The key works at once:
    the API remembers only keys it was sent, and nobody could send this one before it existed."""
    check_rate(rate_per_s)
    client_id = uuid4()
    with connect(settings) as conn:
        try:
            conn.execute(
                "INSERT INTO orders.clients (id, name, scopes, rate_per_s) VALUES (%s, %s, %s, %s)",
                (client_id, name, list(scopes), rate_per_s),
            )
        except psycopg.errors.UniqueViolation as exc:
            raise ClientError(f"a client named {name!r} exists already") from exc
        return Issued(client_id, name, tuple(scopes), _issue(conn, client_id, expires_in))


def issue_key(
    *,
    settings: Settings,
    client_id: UUID,
    expires_in: timedelta | None = None,
    overlap: timedelta | None = None,
) -> Issued:
    """Another key for a live client (rotation), expiring after `expires_in` or never. Its older
    keys stay live until revoked, or with `overlap` for that long from now (a key due to expire
    sooner keeps its time)."""
    with connect(settings) as conn:
        row = conn.execute(
            "SELECT name, scopes FROM orders.clients WHERE id = %s AND revoked_at IS NULL "
            "FOR UPDATE",
            (client_id,),
        ).fetchone()
        if row is None:
            raise ClientError(f"no live client {client_id}")
        if overlap is not None:
            conn.execute(
                "UPDATE orders.api_keys SET expires_at = least(expires_at, now() + %s) "
                "WHERE client_id = %s AND revoked_at IS NULL",
                (overlap, client_id),
            )
        return Issued(client_id, row[0], tuple(row[1]), _issue(conn, client_id, expires_in))


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
