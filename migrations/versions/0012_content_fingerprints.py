"""Content fingerprints: a copy of a counted event with other content is a dead letter.

analytics.applied_events (the de-duplication set) and analytics.staged_records (the staging
area) gain `fingerprint`, the event's content fingerprint (spark_jobs/aggregation/parse.py:
Spark's xxhash64 of the typed event; the same event re-serialised, with other key order,
whitespace or escapes, has the same one). A later copy of a remembered event id whose
fingerprint differs becomes a dead letter "event id reused with different content" (contract
section 4c); the first copy stays counted. Ids remembered before this migration have NULL:
their content is unknown, and no copy of them is called a conflict.

Adding nullable columns without a default changes only the catalog: a moment's ACCESS
EXCLUSIVE lock on each table (every partition of applied_events), no rewrite; lock_timeout gives
up rather than queue the job's batches behind a long transaction.

Revision ID: 0012_content_fingerprints
Revises: 0011_dead_letter_replays
Create Date: 2026-11-25
"""

from alembic import op

revision = "0012_content_fingerprints"
down_revision = "0011_dead_letter_replays"
branch_labels = None
depends_on = None

TABLES = ("analytics.applied_events", "analytics.staged_records")


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ADD COLUMN fingerprint bigint")


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} DROP COLUMN fingerprint")
