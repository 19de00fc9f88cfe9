"""Migration 0022: a fresh key's claim that meets a lock on orders.idempotency_keys held past the
in-flight bound waits for it and claims the key; 0021's claim (lock_timeout around its INSERT)
failed with 55P03, which the API answers 409 request-in-flight. The downgrade restores 0021's
claim_key, upgrading again this revision's."""

import uuid
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from onceflow.client_keys import Issued
from onceflow.settings import Settings
from services.orders.adapters.calls import PLACE, place_args
from services.orders.domain.order import LineItem
from services.orders.service_layer.services import place_command
from tests.integration.databases import alembic
from tests.integration.locks import answered_while_held
from tests.integration.orders.late_start import TRACE

pytestmark = pytest.mark.integration
PREVIOUS = "0021_maintenance_role"
BOUND = "50ms"  # the API's default api_idempotency_wait_ms
HELD_S = 0.3


def place(settings: Settings, caller: Issued) -> str:
    """orders.place_order with a fresh key, as the API calls it: its outcome, or the SQLSTATE
    it failed with."""
    command = place_command(
        client_id=caller.client_id,
        key=f"k-{uuid.uuid4()}",
        customer_id="c-0022",
        currency="EUR",
        items=(LineItem("SKU-1", 2, 1250),),
        traceparent=TRACE,
    )
    with psycopg.connect(settings.dsn("app")) as conn:
        try:
            row = conn.execute(PLACE, place_args(command, lock_timeout=BOUND)).fetchone()
        except psycopg.Error as exc:
            return str(exc.sqlstate)
    assert row is not None
    return str(row[0])


def under_table_lock(settings: Settings, caller: Issued) -> tuple[bool, str]:
    """A fresh key placed while another session holds a lock on the keys' table, HELD_S past
    the moment the claim waits for it: (answered while it was held, the outcome)."""
    with (
        ThreadPoolExecutor(1) as pool,
        psycopg.connect(settings.dsn("owner")) as holder,
        psycopg.connect(settings.dsn("owner"), autocommit=True) as watcher,
    ):
        holder.execute("LOCK TABLE orders.idempotency_keys IN SHARE ROW EXCLUSIVE MODE")
        pending = pool.submit(place, settings, caller)
        return answered_while_held(pending, holder, watcher, HELD_S)


def test_downgrade_restores_the_false_in_flight_and_upgrade_the_wait(
    fresh: Settings, caller: Issued
) -> None:
    assert under_table_lock(fresh, caller) == (False, "created")

    down = alembic(fresh.pg_database, "downgrade", PREVIOUS)
    assert down.returncode == 0, down.stderr
    assert under_table_lock(fresh, caller) == (True, "55P03")  # 0021: lock_timeout on the INSERT

    up = alembic(fresh.pg_database, "upgrade", "head")
    assert up.returncode == 0, up.stderr
    assert under_table_lock(fresh, caller) == (False, "created")
    check = alembic(fresh.pg_database, "check")
    assert check.returncode == 0, check.stdout + check.stderr
