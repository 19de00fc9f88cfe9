"""The job's staging area: executors write their partitions of a micro-batch in parallel.

One UNLOGGED table, analytics.staged_records (migrations/sql/history/0017/staged.sql;
migration 0018 moved it to schema aggregation), keyed by
(query id, batch id): each Spark task writes its partition there over its own connection
(Spark's JDBC writer), and the driver folds the staged batch into
analytics.* in one transaction with the ledger (docs/analytics.md). Privileges follow
grants.sql: the job's group inserts, reads and deletes; analysts see nothing of it.

New, empty table: no lock on an existing table, no downtime. Downgrading drops it with
whatever batches are in flight there: stop the job first (the previous revision's job stages
in temp tables and re-runs its last batch from Kafka).

Revision ID: 0010_staging_area
Revises: 0009_journey
Create Date: 2026-11-23
"""

from pathlib import Path

from alembic import op

revision = "0010_staging_area"
down_revision = "0009_journey"
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[1] / "sql"


def upgrade() -> None:
    op.execute((SQL / "history" / "0017" / "staged.sql").read_text())
    op.execute((SQL / "grants.sql").read_text())


def downgrade() -> None:
    op.execute("DROP TABLE analytics.staged_records")
