"""Every reporting relation (contract section 5) and each of its columns has a COMMENT in the
database (the stack's), the one onceflow/schema gives it; schema analytics holds nothing else
(the job's bookkeeping is in schema aggregation)."""

from typing import Any

import psycopg
import pytest

from migrations import comments
from onceflow.schema import analytics
from onceflow.settings import get_settings

pytestmark = pytest.mark.integration
COMMENTS = """
SELECT c.oid::regclass::text, obj_description(c.oid, 'pg_class'), a.attname,
    col_description(c.oid, a.attnum)
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.oid = ANY(%s::regclass[])
"""


def described() -> dict[str, tuple[str | None, dict[str, str | None]]]:
    """Each reporting relation's comment and its columns', as the stack's database has them."""
    with psycopg.connect(get_settings().dsn("owner")) as conn:
        rows: list[tuple[Any, ...]] = conn.execute(
            COMMENTS, (list(analytics.REPORTING),)
        ).fetchall()
    out: dict[str, tuple[str | None, dict[str, str | None]]] = {}
    for relation, comment, column, about in rows:
        out.setdefault(relation, (comment, {}))[1][column] = about
    return out


def test_every_reporting_relation_and_column_has_the_schemas_comment() -> None:
    actual = described()
    assert set(actual) == set(analytics.REPORTING)
    wanted = comments.wanted()
    for relation, (comment, columns) in actual.items():
        assert comment, f"{relation} has no comment"
        missing = sorted(c for c, about in columns.items() if not about)
        assert not missing, f"columns of {relation} without a comment: {missing}"
        assert (comment, columns) == wanted[relation], relation


def test_schema_analytics_holds_only_the_reporting_relations() -> None:
    with psycopg.connect(get_settings().dsn("owner")) as conn:
        rows = conn.execute(
            "SELECT oid::regclass::text FROM pg_class"
            " WHERE relnamespace = 'analytics'::regnamespace"
            " AND relkind IN ('r', 'p', 'v', 'm', 'f')"
        ).fetchall()
    assert {r[0] for r in rows} == set(analytics.REPORTING)
