"""Analytics schema written by the aggregation job and read by analysts.

Revision ID: 0002_analytics
Revises: 0001_orders
Create Date: 2026-11-22
"""

from alembic import op

from services.config import get_settings

revision = "0002_analytics"
down_revision = "0001_orders"
branch_labels = None
depends_on = None


def upgrade() -> None:
    s = get_settings()
    op.execute("CREATE SCHEMA analytics")
    # TABLES: filled in by the aggregation job's work (contract section 5).
    op.execute(f"GRANT USAGE ON SCHEMA analytics TO {s.spark_db_user}, {s.analyst_db_user}")
    op.execute(
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA analytics "
        f"TO {s.spark_db_user}"
    )
    op.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA analytics TO {s.analyst_db_user}")


def downgrade() -> None:
    op.execute("DROP SCHEMA analytics CASCADE")
