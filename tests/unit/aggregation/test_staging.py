"""The staged tables are generated from one column list each (staging.py): DDL, COPY and move
statements and the dead letters' insert all follow it; the dead letters match
analytics.dead_letters, and the staging area (onceflow/schema/staged.py) has exactly the key and
then these columns."""

import pytest
from sqlalchemy import Table
from sqlalchemy.dialects import postgresql

from onceflow.schema import analytics, staged
from spark_jobs.aggregation import merge, staging

DIALECT = postgresql.dialect()  # type: ignore[no-untyped-call]
# How SQLAlchemy spells the types staging.py abbreviates.
SPELLED = {"timestamptz": "timestamp with time zone"}


def _types(table: Table) -> list[tuple[str, str]]:
    return [(c.name, str(c.type.compile(dialect=DIALECT)).lower()) for c in table.c]


def test_each_staged_table_is_created_with_its_columns_in_order() -> None:
    assert staging.EVENTS.create() == (
        "CREATE TEMP TABLE IF NOT EXISTS t_events (kafka_partition integer, kafka_offset bigint,"
        " kafka_timestamp timestamptz, event_id uuid, event_type text, occurred_at timestamptz,"
        " day date, order_id text, customer_id text, currency text, status text,"
        " status_rank smallint, total_cents bigint, items jsonb) ON COMMIT DELETE ROWS"
    )
    assert merge.NEW.columns == staging.EVENTS.columns


def test_copy_and_insert_name_the_staged_columns() -> None:
    columns = "topic, kafka_partition, kafka_offset, key, value, error"
    assert staging.DEAD_LETTERS.stage() == (
        f"COPY analytics.staged_dead_letters (query_id, batch_id, part, {columns}) FROM STDIN"
    )
    assert staging.DEAD_LETTERS.unstage() == (
        f"INSERT INTO t_dead ({columns}) SELECT {columns} FROM analytics.staged_dead_letters"
        " WHERE query_id = %s AND batch_id = %s"
    )
    assert f"analytics.dead_letters ({columns}) SELECT {columns} FROM t_dead" in (
        merge.KEEP_DEAD_LETTERS
    )


def test_staged_dead_letters_have_the_types_of_analytics_dead_letters() -> None:
    target = dict(_types(analytics.dead_letters))
    assert {c.name: c.pg_type for c in staging.DEAD_LETTERS.columns} == {
        name: target[name] for name in staging.DEAD_LETTERS.names
    }


@pytest.mark.parametrize(
    ("table", "area"),
    [(staging.EVENTS, staged.staged_events), (staging.DEAD_LETTERS, staged.staged_dead_letters)],
)
def test_the_staging_area_holds_the_key_then_the_staged_columns(
    table: staging.StagedTable, area: Table
) -> None:
    assert table.area == area.fullname
    key = [("query_id", "text"), ("batch_id", "bigint"), ("part", "integer")]
    columns = [(c.name, SPELLED.get(c.pg_type, c.pg_type)) for c in table.columns]
    assert _types(area) == [*key, *columns, ("staged_at", "timestamp with time zone")]
    assert tuple(name for name, _ in key) == staging.KEY
