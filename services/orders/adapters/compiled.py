"""SQLAlchemy Core statements compiled once, for the psycopg driver: the API executes the SQL
text on its own psycopg pool, so building a statement costs nothing per request."""

from sqlalchemy.dialects.postgresql import psycopg
from sqlalchemy.sql import ClauseElement

DIALECT = psycopg.dialect()  # type: ignore[no-untyped-call]


def to_sql(statement: ClauseElement) -> str:
    """The statement as SQL text with %(name)s placeholders."""
    return str(statement.compile(dialect=DIALECT))
