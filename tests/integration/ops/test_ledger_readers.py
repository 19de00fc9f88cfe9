"""The job's ledger has read-only readers (contract section 2b, migration 0020): the dashboard and
onceflow-ops read it as `observer`, the reconciler as `reconcile`, and neither holds the job's
password. Their reads work with a wrong password for the job's role, and each write they try on
the ledger is Postgres' own refusal (insufficient privilege), on the stack's database. Maintenance
prunes the job's bookkeeping as `maintenance` (migration 0021): deletes, and no other write."""

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import errors
from pydantic import SecretStr

from onceflow.settings import Settings, get_settings
from services.ops import lag
from services.ops.journey import journey
from services.reconcile import state

pytestmark = pytest.mark.integration
Conn = psycopg.Connection[tuple[Any, ...]]
LEDGER = ("aggregation.applied_batches", "aggregation.applied_events")
READERS = ("observer", "reconcile")
# Writes tried on each table, each refused.
WRITES = (
    "INSERT INTO {table} DEFAULT VALUES",
    "UPDATE {table} SET batch_id = batch_id WHERE false",
    "DELETE FROM {table} WHERE false",
    "TRUNCATE {table}",
)


@pytest.fixture(scope="module")
def without_the_jobs_password() -> Settings:
    """The stack's settings, but the job's role's password is wrong: any use of it fails."""
    return get_settings().model_copy(update={"spark_db_password": SecretStr("not-the-jobs")})


def connect(role: str) -> Iterator[Conn]:
    with psycopg.connect(get_settings().dsn(role), autocommit=True) as conn:
        yield conn


@pytest.fixture
def observer() -> Iterator[Conn]:
    yield from connect("observer")


@pytest.fixture
def reconciler() -> Iterator[Conn]:
    yield from connect("reconcile")


def refused(conn: Conn, statement: str) -> str:
    """Run `statement`; the refusal's message (fails the test if it was allowed)."""
    with pytest.raises(errors.InsufficientPrivilege) as refusal:
        conn.execute(statement)
    return str(refusal.value)


def test_the_job_s_role_is_not_used_by_the_readers(without_the_jobs_password: Settings) -> None:
    settings = without_the_jobs_password
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(settings.dsn("spark")).close()
    applied = lag.applied_offsets(settings=settings)
    assert applied  # the stack's job has applied batches of the topic
    assert lag.last_batch(settings=settings)[1] > 0
    for role in READERS:
        assert state.current(settings, role=role).differences >= 0
    with psycopg.connect(get_settings().dsn("owner")) as owner:
        row = owner.execute(
            "SELECT order_id::text FROM aggregation.applied_events ORDER BY kafka_timestamp DESC"
            " LIMIT 1"
        ).fetchone()
    assert row is not None
    found = journey(settings=settings, order_id=row[0], kafka_timeout=2.0)
    assert found is not None
    assert found.events
    assert all(event.batch is not None for event in found.events)


def test_the_reconciler_reads_the_ledger_s_positions(reconciler: Conn) -> None:
    assert lag.applied_in(reconciler, get_settings().topic)


@pytest.mark.parametrize("role", READERS)
@pytest.mark.parametrize("table", LEDGER)
def test_the_readers_cannot_write_the_ledger(role: str, table: str) -> None:
    for conn in connect(role):
        for statement in WRITES:
            message = refused(conn, statement.format(table=table))
            assert f"permission denied for table {table.split('.')[1]}" in message


def test_the_observer_reads_only_what_it_shows(observer: Conn) -> None:
    for table in (*LEDGER, "reconcile.runs", "reconcile.day_results"):
        observer.execute(f"SELECT 1 FROM {table} LIMIT 1")
    for table in (
        "aggregation.dedup_state",
        "aggregation.order_state",
        "aggregation.staged_records",
        "reconcile.topic_events",
        "reconcile.differences",
    ):
        assert "permission denied" in refused(observer, f"SELECT 1 FROM {table} LIMIT 1")
    assert "permission denied" in refused(observer, "DELETE FROM reconcile.runs WHERE false")
    assert "permission denied" in refused(observer, "SELECT 1 FROM analytics.daily_sales")


def test_the_reconciler_writes_only_its_own_schema(reconciler: Conn) -> None:
    reconciler.execute("DELETE FROM reconcile.differences WHERE false")
    reconciler.execute("SELECT 1 FROM analytics.daily_sales LIMIT 1")
    assert "permission denied" in refused(
        reconciler, "DELETE FROM analytics.daily_sales WHERE false"
    )
    assert "permission denied" in refused(reconciler, "SELECT 1 FROM aggregation.applied_events")
    assert "permission denied" in refused(reconciler, "SELECT 1 FROM analytics.customer_sales")


def test_maintenance_only_deletes_from_the_job_s_bookkeeping() -> None:
    for conn in connect("maintenance"):
        for table in ("aggregation.applied_batches", "aggregation.late_events"):
            conn.execute(f"DELETE FROM {table} WHERE false")
        for statement in WRITES[:2]:
            for table in LEDGER:
                assert "permission denied" in refused(conn, statement.format(table=table))
        assert "permission denied" in refused(conn, "TRUNCATE aggregation.applied_batches")
        # Forgetting ids is dropping a partition, through the owner's function, never a DELETE.
        assert "permission denied" in refused(conn, "DELETE FROM aggregation.applied_events")
        assert "permission denied" in refused(conn, "SELECT 1 FROM analytics.daily_sales")
        assert "permission denied" in refused(conn, "SELECT aggregation.lock_writers()")


def test_the_job_s_role_no_longer_has_the_reconciler_s_schema() -> None:
    for conn in connect("spark"):
        assert "permission denied" in refused(conn, "SELECT 1 FROM reconcile.runs")
