"""docs/analytics.md, the analysts' guide, holds: it describes exactly the reporting relations
(onceflow.schema.analytics.REPORTING), every example query runs as the analyst role on the
stack's database, the analyst reads every reporting relation unqualified (its search_path, set
by provisioning) and sees nothing else: the job's bookkeeping is in schema aggregation, on which
the analyst has no USAGE (migration 0018)."""

import re

import psycopg
import pytest
from psycopg import errors

from onceflow.paths import ROOT
from onceflow.schema import analytics
from onceflow.schema.metadata import BOOKKEEPING_SCHEMA
from onceflow.settings import get_settings

pytestmark = pytest.mark.integration
GUIDE = (ROOT / "docs" / "analytics.md").read_text()
# What the analyst can see: the relations information_schema lists for it, and those of pg_class
# in a schema it may use that it may read (a relation outside both cannot even be named).
LISTED = """
SELECT table_schema || '.' || table_name FROM information_schema.tables
WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
"""
READABLE = """
SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
  AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT')
"""


def example_queries() -> list[str]:
    """The statements of the sql block under "## Example queries"."""
    section = GUIDE.split("## Example queries", 1)[1]
    block = re.search(r"```sql\n(.*?)```", section, flags=re.DOTALL)
    assert block is not None, "no sql block under ## Example queries"
    statements = [s.strip() for s in block.group(1).split(";")]
    return [
        s for s in statements if s and not all(line.startswith("--") for line in s.splitlines())
    ]


def test_the_guide_describes_exactly_the_reporting_relations() -> None:
    headed = set(re.findall(r"^### `(analytics\.\w+)`", GUIDE, flags=re.MULTILINE))
    assert headed == set(analytics.REPORTING)


def test_every_example_query_runs_as_the_analyst() -> None:
    queries = example_queries()
    assert len(queries) >= 8
    with psycopg.connect(get_settings().dsn("analyst"), autocommit=True) as conn:
        for query in queries:
            cur = conn.execute(query)  # a failing query raises, with its text in the error
            assert cur.description is not None, query


def test_the_analyst_queries_the_reporting_relations_unqualified() -> None:
    with psycopg.connect(get_settings().dsn("analyst"), autocommit=True) as conn:
        assert conn.execute("SHOW search_path").fetchone() == ("analytics",)
        for relation in analytics.REPORTING:
            name = relation.removeprefix("analytics.")
            cur = conn.execute(f"SELECT * FROM {name} LIMIT 1")
            assert cur.description is not None, name


def test_the_analyst_sees_only_the_reporting_relations() -> None:
    with psycopg.connect(get_settings().dsn("analyst"), autocommit=True) as conn:
        assert {r[0] for r in conn.execute(LISTED)} == set(analytics.REPORTING)
        assert {r[0] for r in conn.execute(READABLE)} == set(analytics.REPORTING)
        usage = "SELECT has_schema_privilege(%s, 'USAGE')"
        assert conn.execute(usage, (BOOKKEEPING_SCHEMA,)).fetchone() == (False,)


@pytest.mark.parametrize("table", sorted(analytics.BOOKKEEPING))
def test_the_analyst_cannot_read_the_bookkeeping(table: str) -> None:
    with (
        psycopg.connect(get_settings().dsn("analyst"), autocommit=True) as conn,
        pytest.raises(errors.InsufficientPrivilege, match="permission denied for schema"),
    ):
        conn.execute(f"SELECT 1 FROM {table} LIMIT 1")
