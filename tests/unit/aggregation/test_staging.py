"""The temp tables and the staging area are generated from one column list each (staging.py):
DDL and move statements and the dead letters' insert all follow it; the dead letters match
analytics.dead_letters, and the staging area (onceflow/schema/staged.py) has exactly the key,
then every temp table's columns once, then staged_at."""

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateTable

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
        " status_rank smallint, total_cents bigint, items jsonb, fingerprint bigint)"
        " ON COMMIT DELETE ROWS"
    )
    assert merge.NEW.columns == staging.EVENTS.columns


def test_unstage_moves_each_kafka_position_of_its_kind_once() -> None:
    columns = "topic, kafka_partition, kafka_offset, key, value, error"
    assert staging.DEAD_LETTERS.unstage() == (
        f"INSERT INTO t_dead ({columns}) SELECT DISTINCT ON (kafka_partition, kafka_offset)"
        f" {columns} FROM aggregation.staged_records WHERE query_id = %s AND batch_id = %s"
        " AND error IS NOT NULL"
    )
    events = ", ".join(staging.EVENTS.names)
    assert staging.EVENTS.unstage() == (
        f"INSERT INTO t_events ({events}) SELECT DISTINCT ON (kafka_partition, kafka_offset)"
        f" {events} FROM aggregation.staged_records WHERE query_id = %s AND batch_id = %s"
        " AND error IS NULL"
    )
    assert f"analytics.dead_letters ({columns}) SELECT {columns} FROM t_dead" in (
        merge.KEEP_DEAD_LETTERS
    )


def test_staged_dead_letters_have_the_types_of_analytics_dead_letters() -> None:
    target = dict(_types(analytics.dead_letters))
    assert {c.name: c.pg_type for c in staging.DEAD_LETTERS.columns} == {
        name: target[name] for name in staging.DEAD_LETTERS.names
    }


def test_the_staged_columns_are_every_temp_tables_once_in_order() -> None:
    assert (
        *staging.EVENTS.names,
        *[n for n in staging.DEAD_LETTERS.names if n not in staging.EVENTS.names],
    ) == staging.COLUMNS
    assert len(set(staging.COLUMNS)) == len(staging.COLUMNS)
    # A column both temp tables have (the Kafka position) has one type in both.
    shared = {c.name: c.pg_type for c in staging.EVENTS.columns}
    for c in staging.DEAD_LETTERS.columns:
        assert shared.get(c.name, c.pg_type) == c.pg_type, c.name


def test_the_staging_area_holds_the_key_then_the_staged_columns() -> None:
    area = staged.staged_records
    assert area.fullname == staging.AREA
    assert (area,) == staged.STAGED_TABLES
    types = {
        c.name: SPELLED.get(c.pg_type, c.pg_type)
        for c in (*staging.EVENTS.columns, *staging.DEAD_LETTERS.columns)
    }
    key = [("query_id", "text"), ("batch_id", "bigint")]
    columns = [(name, types[name]) for name in staging.COLUMNS]
    assert _types(area) == [*key, *columns, ("staged_at", "timestamp with time zone")]
    assert tuple(name for name, _ in key) == staging.KEY
    # Only the key and the Kafka position are set on every row; the rest is one kind's.
    required = [c.name for c in area.c if not c.nullable]
    assert required == [*staging.KEY, *staging.POSITION, "staged_at"]


def test_the_staging_area_is_unlogged_and_indexed_by_batch_then_position() -> None:
    area = staged.staged_records
    ddl = str(CreateTable(area).compile(dialect=DIALECT))
    assert ddl.lstrip().startswith(f"CREATE UNLOGGED TABLE {staging.AREA} (")
    (index,) = area.indexes
    assert tuple(c.name for c in index.columns) == (*staging.KEY, *staging.POSITION)
