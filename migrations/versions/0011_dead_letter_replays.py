"""Dead letters remember their replay (`onceflow-ops dead-letters replay`, docs/operations.md).

analytics.dead_letters gains when a dead letter was replayed (replayed_at), the event id the
replay carried (replayed_event_id) and the batch of query `replay` in analytics.applied_batches
that counted it (replay_batch_id; NULL when the event id had already been counted, so the
replay changed no table). A replay runs as the job's role, which already holds UPDATE on every
analytics table (migrations/sql/grants.sql grants it to onceflow_spark), so no grant changes.

Adding nullable columns without a default changes only the catalog: a moment's ACCESS
EXCLUSIVE lock on analytics.dead_letters, no rewrite; lock_timeout gives up rather than queue
the job's batches behind a long transaction.

Revision ID: 0011_dead_letter_replays
Revises: 0010_staging_area
Create Date: 2026-11-25
"""

from alembic import op

revision = "0011_dead_letter_replays"
down_revision = "0010_staging_area"
branch_labels = None
depends_on = None

COLUMNS = (
    ("replayed_at", "timestamptz"),
    ("replayed_event_id", "uuid"),
    ("replay_batch_id", "bigint"),
)


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    added = ", ".join(f"ADD COLUMN {name} {pg_type}" for name, pg_type in COLUMNS)
    op.execute(f"ALTER TABLE analytics.dead_letters {added}")


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    dropped = ", ".join(f"DROP COLUMN {name}" for name, _ in COLUMNS)
    op.execute(f"ALTER TABLE analytics.dead_letters {dropped}")
