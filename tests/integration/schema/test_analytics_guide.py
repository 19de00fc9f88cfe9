"""docs/analytics.md, the analysts' guide, holds: it describes exactly the reporting relations
(onceflow.schema.analytics.REPORTING), every example query runs as the analyst role on the
stack's database, and the analyst reads every reporting relation unqualified (its search_path,
set by provisioning)."""

import re

import psycopg
import pytest

from onceflow.paths import ROOT
from onceflow.schema import analytics
from onceflow.settings import get_settings

pytestmark = pytest.mark.integration
GUIDE = (ROOT / "docs" / "analytics.md").read_text()


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
