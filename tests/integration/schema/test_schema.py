"""A database migrated from scratch: its schema is onceflow.schema, its bounds the contract's,
and every privilege reaches a login role only through its group."""

import re
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from onceflow import contract
from onceflow.schema.roles import GROUPS
from onceflow.settings import Settings
from tests.integration.databases import alembic

pytestmark = pytest.mark.integration
Conn = psycopg.Connection[tuple[Any, ...]]


@pytest.fixture
def owner(fresh: Settings) -> Iterator[Conn]:
    with psycopg.connect(fresh.dsn("owner"), autocommit=True) as conn:
        yield conn


def _check(conn: Conn, table: str, column: str) -> str:
    row = conn.execute(
        "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c "
        "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey) "
        "WHERE c.contype = 'c' AND c.conrelid = %s::regclass AND a.attname = %s",
        (table, column),
    ).fetchone()
    assert row is not None, f"no CHECK on {table}.{column}"
    return str(row[0])


def _bounds(definition: str) -> tuple[int, int]:
    low, high = re.findall(r"\d+", definition)[-2:]
    return int(low), int(high)


def test_alembic_check_finds_no_drift_from_the_metadata(fresh: Settings) -> None:
    result = alembic(fresh.pg_database, "check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_bounds_are_the_contracts(owner: Conn) -> None:
    assert _bounds(_check(owner, "orders.order_items", "quantity")) == (
        contract.MIN_QUANTITY,
        contract.MAX_QUANTITY,
    )
    assert _bounds(_check(owner, "orders.order_items", "unit_price_cents")) == (
        contract.MIN_UNIT_PRICE_CENTS,
        contract.MAX_UNIT_PRICE_CENTS,
    )
    assert _bounds(_check(owner, "orders.idempotency_keys", "key")) == (
        1,
        contract.IDEMPOTENCY_KEY_MAX_LENGTH,
    )


@pytest.mark.parametrize("table", ["orders.orders", "aggregation.order_state"])
def test_status_checks_list_the_contracts_statuses(owner: Conn, table: str) -> None:
    listed = set(re.findall(r"'(\w+)'", _check(owner, table, "status")))
    assert listed == set(contract.OrderStatus)


def test_order_status_counts_has_a_row_per_status(owner: Conn) -> None:
    rows = owner.execute("SELECT status FROM analytics.order_status_counts").fetchall()
    assert [r[0] for r in rows] == list(contract.OrderStatus)


def test_events_carry_the_schema_version_the_api_passes(owner: Conn) -> None:
    row = owner.execute("SELECT pg_get_functiondef('orders.emit_event'::regproc)").fetchone()
    assert row is not None  # the API passes contract.SCHEMA_VERSION (tests/unit/orders)
    assert re.findall(r"'schema_version', (\w+)", row[0]) == ["p_schema_version"]


def test_no_login_role_holds_a_table_privilege_directly(owner: Conn, fresh: Settings) -> None:
    direct = owner.execute(
        "SELECT DISTINCT grantee FROM information_schema.role_table_grants "
        "WHERE table_schema IN ('orders', 'analytics', 'aggregation') AND grantee <> current_user"
    ).fetchall()
    assert {r[0] for r in direct} <= set(GROUPS.values())


@pytest.mark.parametrize(
    ("role", "table", "privilege", "held"),
    [
        ("app", "orders.orders", "INSERT", True),
        ("app", "orders.outbox", "INSERT", True),
        ("app", "analytics.daily_sales", "SELECT", False),
        ("cdc", "orders.outbox", "SELECT", True),
        ("cdc", "orders.orders", "SELECT", False),
        ("spark", "analytics.daily_sales", "UPDATE", True),
        ("spark", "orders.orders", "SELECT", False),
        ("analyst", "analytics.daily_sales", "SELECT", True),
        ("analyst", "analytics.daily_sales", "INSERT", False),
        ("analyst", "orders.orders", "SELECT", False),
        ("app", "orders.clients", "SELECT", True),
        ("app", "orders.clients", "UPDATE", False),
        ("app", "orders.api_keys", "SELECT", True),
        ("app", "orders.api_keys", "INSERT", False),
        ("app", "orders.api_keys", "DELETE", False),
        ("analyst", "orders.api_keys", "SELECT", False),
        ("spark", "aggregation.staged_records", "SELECT", True),
        ("spark", "aggregation.staged_records", "INSERT", True),
        ("spark", "aggregation.staged_records", "DELETE", True),
        ("spark", "aggregation.staged_records", "UPDATE", False),
        ("spark", "aggregation.staged_records", "TRUNCATE", False),
        ("analyst", "aggregation.staged_records", "SELECT", False),
        ("spark", "aggregation.applied_events", "INSERT", True),
        ("spark", "aggregation.order_state", "UPDATE", True),
        ("analyst", "aggregation.applied_batches", "SELECT", False),
        ("analyst", "aggregation.order_state", "SELECT", False),
    ],
)
def test_each_login_role_gets_least_privilege_through_its_group(
    owner: Conn, fresh: Settings, role: str, table: str, privilege: str, held: bool
) -> None:
    user = getattr(fresh, f"{role}_db_user")
    row = owner.execute("SELECT has_table_privilege(%s, %s, %s)", (user, table, privilege))
    assert row.fetchone() == (held,)


def test_only_the_api_group_may_call_the_write_functions(owner: Conn, fresh: Settings) -> None:
    check = "SELECT has_function_privilege(%s, 'orders.place_order'::regproc, 'EXECUTE')"
    assert owner.execute(check, (fresh.app_db_user,)).fetchone() == (True,)
    assert owner.execute(check, (fresh.analyst_db_user,)).fetchone() == (False,)


@pytest.mark.parametrize(("column", "held"), [("last_used_at", True), ("revoked_at", False)])
def test_the_api_may_only_record_when_a_key_was_used(
    owner: Conn, fresh: Settings, column: str, held: bool
) -> None:
    row = owner.execute(
        "SELECT has_column_privilege(%s, 'orders.api_keys', %s, 'UPDATE')",
        (fresh.app_db_user, column),
    )
    assert row.fetchone() == (held,)


def test_churning_tables_are_never_truncated_by_vacuum(owner: Conn) -> None:
    # Truncation takes an ACCESS EXCLUSIVE lock: a key claim waiting on it answered a false 409.
    rows = owner.execute(
        "SELECT n.nspname || '.' || c.relname FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE array_to_string(c.reloptions, ',') ~ 'vacuum_truncate=(off|false)'"
    ).fetchall()
    assert {r[0] for r in rows} >= {"orders.idempotency_keys", "orders.outbox"}
