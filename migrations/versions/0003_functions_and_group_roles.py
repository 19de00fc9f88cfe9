"""Server-side functions from migrations/sql/orders/, privileges to fixed group roles.

The function bodies moved out of 0001 into one .sql file each (migrations/functions.py); the
grants of 0001/0002 went to login roles named by run-time settings and now go to NOLOGIN group
roles (migrations/sql/grants.sql), which provisioning creates before migrating.

Revision ID: 0003_functions_and_group_roles
Revises: 0002_analytics
Create Date: 2026-11-23
"""

from pathlib import Path

from alembic import op

from migrations import functions

revision = "0003_functions_and_group_roles"
down_revision = "0002_analytics"
branch_labels = None
depends_on = None

GRANTS = Path(__file__).resolve().parents[1] / "sql" / "grants.sql"


def upgrade() -> None:
    functions.replace_all(op)
    op.execute(GRANTS.read_text())


def downgrade() -> None:
    raise NotImplementedError("0003 is not reversible: restore from a backup instead")
