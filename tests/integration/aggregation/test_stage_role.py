"""The executors' database role (contract section 2b, migration 0019): it inserts staged rows
through aggregation.staging_inbox and can do nothing else — not write the ledger, the
de-duplication set or any analytics table, not read or delete the staging area. Each refusal is
Postgres' own (insufficient privilege), tried as the role on the stack's database."""

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import errors

from onceflow.settings import get_aggregation_settings, get_settings
from spark_jobs.aggregation import staging
from spark_jobs.aggregation.sink import PostgresSink

pytestmark = pytest.mark.integration
Conn = psycopg.Connection[tuple[Any, ...]]
# The ledger and the de-duplication set, named as the issue names them.
LEDGER = ("aggregation.applied_batches", "aggregation.applied_events")


@pytest.fixture
def executor() -> Iterator[Conn]:
    with psycopg.connect(get_settings().dsn("spark_stage"), autocommit=True) as conn:
        yield conn


def tables(schema: str) -> list[str]:
    """The tables of a schema (as the owner sees them), qualified."""
    with psycopg.connect(get_settings().dsn("owner")) as conn:
        rows = conn.execute(
            "SELECT format('%%I.%%I', n.nspname, c.relname) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'u') ORDER BY 1",
            (schema,),
        ).fetchall()
    return [name for (name,) in rows]


def first_column(table: str) -> str:
    """A column of `table` (schema-qualified), quoted."""
    with psycopg.connect(get_settings().dsn("owner")) as conn:
        row = conn.execute(
            "SELECT quote_ident(attname) FROM pg_attribute WHERE attrelid = %s::regclass"
            " AND attnum > 0 AND NOT attisdropped ORDER BY attnum LIMIT 1",
            (table,),
        ).fetchone()
    assert row is not None, table
    return str(row[0])


def refused(conn: Conn, statement: str) -> str:
    """Run `statement`; the refusal's message (fails the test if it was allowed)."""
    with pytest.raises(errors.InsufficientPrivilege) as refusal:
        conn.execute(statement)
    return str(refusal.value)


def test_the_executors_connect_as_the_staging_role(tmp_path: Path) -> None:
    sink = PostgresSink(get_settings(), get_aggregation_settings(), checkpoint=tmp_path)
    try:
        assert sink.target.user == get_settings().spark_stage_db_user
        with sink.pool.connection() as driver:
            assert driver.execute("SELECT current_user").fetchone() == (
                get_settings().spark_db_user,
            )
    finally:
        sink.close()


def test_inserts_staged_rows_and_reads_none(executor: Conn) -> None:
    query_id = f"test-stage-role-{uuid.uuid4()}"
    executor.execute(
        f"INSERT INTO {staging.INBOX} (query_id, batch_id, kafka_partition, kafka_offset, error)"
        " VALUES (%s, 1, 0, 0, 'test row')",
        (query_id,),
    )
    assert executor.execute(f"SELECT count(*) FROM {staging.INBOX}").fetchone() == (0,)
    with psycopg.connect(get_settings().dsn("spark"), autocommit=True) as job:
        deleted = job.execute(f"DELETE FROM {staging.AREA} WHERE query_id = %s", (query_id,))
        assert deleted.rowcount == 1


@pytest.mark.parametrize("table", [*LEDGER, staging.AREA])
def test_cannot_touch_the_ledger_nor_the_staging_area(executor: Conn, table: str) -> None:
    for statement in (
        f"INSERT INTO {table} DEFAULT VALUES",
        f"DELETE FROM {table} WHERE false",
        f"TRUNCATE {table}",
        f"SELECT 1 FROM {table} LIMIT 1",
    ):
        assert "permission denied" in refused(executor, statement)


def test_cannot_write_any_analytics_or_bookkeeping_table(executor: Conn) -> None:
    every = tables("analytics") + tables("aggregation")
    assert set(LEDGER) <= set(every)
    assert "analytics.daily_sales" in every
    for table in every:
        for statement in (
            f"INSERT INTO {table} DEFAULT VALUES",
            # Privileges are checked before any row is looked at: refused even with no row.
            f"UPDATE {table} SET {first_column(table)} = {first_column(table)} WHERE false",
            f"DELETE FROM {table} WHERE false",
            f"TRUNCATE {table}",
        ):
            assert "permission denied" in refused(executor, statement), (table, statement)


def test_cannot_call_the_jobs_functions(executor: Conn) -> None:
    assert "permission denied" in refused(executor, "SELECT aggregation.lock_writers()")
