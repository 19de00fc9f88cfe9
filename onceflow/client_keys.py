"""API clients and their keys as they are issued (the schema owner writes; the API only reads),
for ops (`onceflow-ops clients`, services/ops/clients.py) and the local stack's key
(stack/api_key.py). A key is returned once, when issued; the database keeps only its SHA-256."""

import math
from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import psycopg

from onceflow.api_keys import key_hash, new_key
from onceflow.settings import Settings

IS_LIVE = (Path(__file__).resolve().parent / "sql" / "clients" / "key_is_live.sql").read_text()


class ClientError(ValueError):
    """A request its caller can fix: said in one sentence."""


@dataclass(frozen=True)
class Issued:
    """A client and the key just issued to it (the only time the key is known)."""

    client_id: UUID
    name: str
    scopes: tuple[str, ...]
    key: str


def connect(settings: Settings) -> psycopg.Connection[tuple[Any, ...]]:
    return psycopg.connect(settings.dsn("owner"))


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
        row = conn.execute(IS_LIVE, (key_hash(key),)).fetchone()
    return row is not None
