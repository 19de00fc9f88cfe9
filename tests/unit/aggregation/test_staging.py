"""The staged tables are generated from one column list each (staging.py): DDL, COPY statement
and the dead letters' insert all follow it, and the dead letters match analytics.dead_letters."""

from sqlalchemy.dialects import postgresql

from onceflow.schema import analytics
from spark_jobs.aggregation import merge, staging


def test_each_staged_table_is_created_with_its_columns_in_order() -> None:
    assert staging.EVENTS.create() == (
        "CREATE TEMP TABLE IF NOT EXISTS t_events (kafka_partition integer, kafka_offset bigint,"
        " kafka_timestamp timestamptz, event_id uuid, event_type text, occurred_at timestamptz,"
        " day date, order_id text, customer_id text, currency text, status text,"
        " status_rank smallint, total_cents bigint, items jsonb) ON COMMIT DELETE ROWS"
    )
    assert merge.NEW.columns == staging.EVENTS.columns


def test_copy_and_insert_name_the_staged_columns() -> None:
    assert staging.DEAD_LETTERS.copy() == (
        "COPY t_dead (topic, kafka_partition, kafka_offset, key, value, error) FROM STDIN"
    )
    columns = "topic, kafka_partition, kafka_offset, key, value, error"
    assert f"analytics.dead_letters ({columns}) SELECT {columns} FROM t_dead" in (
        merge.KEEP_DEAD_LETTERS
    )


def test_staged_dead_letters_have_the_types_of_analytics_dead_letters() -> None:
    dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
    target = {
        c.name: str(c.type.compile(dialect=dialect)).lower() for c in analytics.dead_letters.c
    }
    assert {c.name: c.pg_type for c in staging.DEAD_LETTERS.columns} == {
        name: target[name] for name in staging.DEAD_LETTERS.names
    }
