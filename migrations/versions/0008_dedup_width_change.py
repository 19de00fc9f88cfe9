"""A change of the de-duplication partition width applies from the end of the current partition.

Before: dedup_set_width changed the width of partitions created from then on, but maintenance
creates partitions two widths ahead, so the old width held for up to two more old widths (two
days when going from days to minutes). Now the empty partitions made ahead at another width are
dropped and made again at the new one (migrations/sql/history/0017/dedup_set_width.sql).

Revision ID: 0008_dedup_width_change
Revises: 0007_no_vacuum_truncate
Create Date: 2026-11-23
"""

from pathlib import Path

from alembic import op

revision = "0008_dedup_width_change"
down_revision = "0007_no_vacuum_truncate"
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[1] / "sql"


def upgrade() -> None:
    op.execute((SQL / "history" / "0017" / "dedup_set_width.sql").read_text())


def downgrade() -> None:
    op.execute((SQL / "history" / "0007" / "dedup_set_width.sql").read_text())
