"""Journeys: each remembered event records where it came from and which batch applied it.

analytics.applied_events (the bounded de-duplication set, one row per counted event) gains the
event's order id and type, its Kafka partition, offset and timestamp, and the (query id, batch
id) of the micro-batch that counted it, all written in that batch's transaction. An order's
journey (`onceflow-ops trace`, services/ops/journey.py) is then one indexed query, kept as long
as the de-duplication window. The columns are nullable: ids remembered before this migration
have no journey. Adding nullable columns without a default changes only the catalog; the
partitioned index is built on every partition (and on each one dedup_cover creates later).

Downtime: the ALTER takes an ACCESS EXCLUSIVE lock on applied_events and holds it (in this
migration's transaction) while the index is built, so the job's batches, maintenance and
analysts' reads of the set wait that long. Locally it is a moment; on a large set stop the
aggregation job first (docs/operations.md, "Upgrading"). lock_timeout makes the migration give
up, rather than queue every reader behind it, when a long transaction holds the table.

Revision ID: 0009_journey
Revises: 0008_dedup_width_change
Create Date: 2026-11-23
"""

from alembic import op

revision = "0009_journey"
down_revision = "0008_dedup_width_change"
branch_labels = None
depends_on = None

COLUMNS = (
    ("order_id", "text"),
    ("event_type", "text"),
    ("kafka_partition", "integer"),
    ("kafka_offset", "bigint"),
    ("kafka_timestamp", "timestamptz"),
    ("query_id", "text"),
    ("batch_id", "bigint"),
)


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    added = ", ".join(f"ADD COLUMN {name} {pg_type}" for name, pg_type in COLUMNS)
    op.execute(f"ALTER TABLE analytics.applied_events {added}")
    op.execute("CREATE INDEX applied_events_by_order ON analytics.applied_events (order_id)")


def downgrade() -> None:
    op.execute("DROP INDEX analytics.applied_events_by_order")
    dropped = ", ".join(f"DROP COLUMN {name}" for name, _ in COLUMNS)
    op.execute(f"ALTER TABLE analytics.applied_events {dropped}")
