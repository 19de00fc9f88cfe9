"""Migration 0006 on a table that already holds orders: every order is backfilled to the client
`legacy`, the NOT NULL and the foreign key end up validated, and the downgrade restores 0005."""

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from onceflow.settings import Settings
from tests.integration.databases import alembic
from tests.integration.schema.scratch import scratch_database

pytestmark = pytest.mark.integration
Conn = psycopg.Connection[tuple[Any, ...]]
ORDERS = 12_345  # more than two backfill batches (5000 each)


def one(conn: Conn, query: str, *args: object) -> Any:
    row = conn.execute(query, args).fetchone()
    assert row is not None
    return row[0]


@pytest.fixture(scope="module")
def at_0005() -> Iterator[Settings]:
    with scratch_database("test_0006", "0005_bounded_dedup") as settings:
        yield settings


@pytest.fixture(scope="module")
def owner(at_0005: Settings) -> Iterator[Conn]:
    with psycopg.connect(at_0005.dsn("owner"), autocommit=True) as conn:
        yield conn


def test_upgrade_backfills_and_validates_then_downgrade_restores(
    at_0005: Settings, owner: Conn
) -> None:
    owner.execute(
        "INSERT INTO orders.orders SELECT gen_random_uuid(), 'c-' || i, 'EUR', 'PLACED', 0, "
        "now(), now() FROM generate_series(1, %s) AS i",
        (ORDERS,),
    )
    result = alembic(at_0005.pg_database, "upgrade", "head")
    assert result.returncode == 0, result.stderr

    legacy = one(owner, "SELECT id FROM orders.clients WHERE name = 'legacy'")
    counts = owner.execute(
        "SELECT client_id, count(*) FROM orders.orders GROUP BY client_id"
    ).fetchall()
    assert counts == [(legacy, ORDERS)]
    assert one(
        owner,
        "SELECT attnotnull FROM pg_attribute "
        "WHERE attrelid = 'orders.orders'::regclass AND attname = 'client_id'",
    )
    constraints = owner.execute(
        "SELECT conname, contype, convalidated FROM pg_constraint "
        "WHERE conrelid = 'orders.orders'::regclass AND conname LIKE 'orders_client_id%%'"
    ).fetchall()
    assert constraints == [("orders_client_id_fkey", "f", True)]  # the helper CHECK is gone
    assert one(
        owner,
        "SELECT indisvalid FROM pg_index WHERE indexrelid = 'orders.orders_by_client'::regclass",
    )
    assert alembic(at_0005.pg_database, "check").returncode == 0

    result = alembic(at_0005.pg_database, "downgrade", "0005_bounded_dedup")
    assert result.returncode == 0, result.stderr
    assert one(owner, "SELECT count(*) FROM orders.orders") == ORDERS
    assert one(owner, "SELECT to_regclass('orders.clients')") is None
    arguments = one(owner, "SELECT pg_get_function_arguments('orders.place_order'::regproc)")
    assert "p_client_id" not in arguments
    assert "p_traceparent" in arguments

    result = alembic(at_0005.pg_database, "upgrade", "head")  # and forward again
    assert result.returncode == 0, result.stderr
