"""The COMMENTs of Onceflow's relations and columns, set from onceflow/schema (their one home).

Each table's and column's `comment=` in the metadata, and the views' comments
(onceflow.schema.analytics.VIEW_COMMENTS), which metadata cannot hold. A migration that changes
any of them calls `set_all(op)`, which sets every comment of a relation or column that exists at
that revision (a later revision's columns are left to the migration that adds them); `alembic
check` then compares the tables' comments with the metadata.
"""

from typing import Any

from sqlalchemy import text

from onceflow.schema import analytics, metadata

COLUMNS = """
SELECT n.nspname || '.' || c.relname, c.relkind, a.attname
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = ANY(:schemas) AND c.relkind IN ('r', 'p', 'v')
"""
KIND = {"r": "TABLE", "p": "TABLE", "v": "VIEW"}
Comments = dict[str, tuple[str | None, dict[str, str | None]]]


def wanted() -> Comments:
    """Every relation's comment and its columns' (None: no comment), by qualified name."""
    out: Comments = {
        t.fullname: (t.comment, {c.name: c.comment for c in t.columns})
        for t in metadata.sorted_tables
    }
    out.update(analytics.VIEW_COMMENTS)
    return out


def literal(value: str | None) -> str:
    """`value` as an SQL string literal (NULL: no comment)."""
    return "NULL" if value is None else "'" + value.replace("'", "''") + "'"


def set_all(op: Any, *, clear: bool = False) -> None:
    """Set (`clear`: remove) the comment of every relation and column of the metadata that
    exists in the database, and only those."""
    rows = op.get_bind().execute(text(COLUMNS), {"schemas": ["orders", "analytics"]})
    kinds: dict[str, str] = {}
    existing: set[tuple[str, str]] = set()
    for relation, kind, column in rows:
        kinds[relation] = KIND[kind]
        existing.add((relation, column))
    for relation, (comment, columns) in wanted().items():
        if relation not in kinds:
            continue
        if comment is not None:
            op.execute(
                f"COMMENT ON {kinds[relation]} {relation} IS {literal(None if clear else comment)}"
            )
        for column, about in columns.items():
            if about is not None and (relation, column) in existing:
                op.execute(
                    f"COMMENT ON COLUMN {relation}.{column} IS {literal(None if clear else about)}"
                )
