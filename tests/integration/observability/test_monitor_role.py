"""The exporter's role reads statistics and catalogs through pg_monitor, and no table's rows."""

from collections.abc import Iterator

import psycopg
import pytest
import yaml

from onceflow.settings import get_settings
from stack import prometheus

pytestmark = pytest.mark.integration


@pytest.fixture
def monitor() -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    with psycopg.connect(get_settings().dsn("monitor"), autocommit=True) as conn:
        yield conn


def test_the_monitor_role_is_in_pg_monitor_only(
    monitor: psycopg.Connection[tuple[object, ...]],
) -> None:
    row = monitor.execute(
        "SELECT r.rolsuper, r.rolreplication, r.rolcreaterole, r.rolcreatedb,"
        " pg_has_role(current_user, 'pg_monitor', 'member'),"
        " array(SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid"
        "       WHERE m.member = r.oid ORDER BY 1)"
        " FROM pg_roles r WHERE r.rolname = current_user"
    ).fetchone()
    assert row == (False, False, False, False, True, ["pg_monitor"])


@pytest.mark.parametrize(
    "table",
    ["orders.orders", "orders.order_items", "orders.outbox", "aggregation.applied_events"],
)
def test_the_monitor_role_cannot_read_rows(
    monitor: psycopg.Connection[tuple[object, ...]], table: str
) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        monitor.execute(f"SELECT * FROM {table} LIMIT 1")


def test_every_project_query_runs_as_the_monitor_role(
    monitor: psycopg.Connection[tuple[object, ...]],
) -> None:
    queries = yaml.safe_load(prometheus.PG_QUERIES.read_text())
    rows = {name: monitor.execute(spec["query"]).fetchall() for name, spec in queries.items()}
    settings = get_settings()
    assert [r[0] for r in rows["onceflow_slot"]] == [settings.replication_slot]
    assert len(rows["onceflow_table"]) == 5
    # pg_read_all_stats: it sees every session's state, not only its own.
    assert any(r[0] == settings.pg_database and r[2] != 0 for r in rows["pg_stat_activity"])
