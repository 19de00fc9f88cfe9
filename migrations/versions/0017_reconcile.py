"""Continuous reconciliation (issue 23, contract §5): schema `reconcile` holds the reconciler's
cursor over the topic, the events it read once, and its last report (services/reconcile,
migrations/sql/reconcile_0017.sql). New tables only: nothing else is locked or rewritten.

Revision ID: 0017_reconcile
Revises: 0016_key_expiry
Create Date: 2026-11-26
"""

from pathlib import Path

from alembic import op

revision = "0017_reconcile"
down_revision = "0016_key_expiry"
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[1] / "sql" / "reconcile_0017.sql"


def upgrade() -> None:
    op.execute(SQL.read_text())


def downgrade() -> None:
    op.execute("DROP SCHEMA reconcile CASCADE")
