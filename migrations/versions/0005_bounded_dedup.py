"""Bounded de-duplication: applied_events partitioned by occurred_at, late events traced.

Before: analytics.applied_events kept every event id ever counted. Now it is partitioned by
the event's occurred_at (key (event_id, occurred_at): every copy of an event carries the same
pair), maintenance drops partitions older than the window (migrations/sql/history/0017/dedup.sql),
and an event older than the forgotten horizon is counted and recorded in late_events.

The ids counted before this migration (if any) have no occurred_at: they become the partition
`applied_events_legacy`, bounded by this migration's time (every event they stand for occurred
before it), with occurred_at = -infinity, which the job also matches; it is dropped once the window has passed.

Revision ID: 0005_bounded_dedup
Revises: 0004_heartbeat
Create Date: 2026-11-23
"""

from pathlib import Path

from alembic import op

revision = "0005_bounded_dedup"
down_revision = "0004_heartbeat"
branch_labels = None
depends_on = None

# The script as this revision ran it, in schema analytics (0018 moved the bookkeeping out).
DEDUP_SQL = Path(__file__).resolve().parents[1] / "sql" / "history" / "0017" / "dedup.sql"


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE analytics.dedup_state (
            singleton         boolean      PRIMARY KEY DEFAULT true CHECK (singleton),
            width             interval     NOT NULL,
            forgotten_before  timestamptz  NOT NULL
        )
        """
    )
    op.execute("INSERT INTO analytics.dedup_state VALUES (true, '1 day', '-infinity')")
    op.execute(
        """
        CREATE TABLE analytics.dedup_partitions (
            name         text         PRIMARY KEY,
            lower_bound  timestamptz  NOT NULL,
            upper_bound  timestamptz  NOT NULL
        )
        """
    )
    op.execute("ALTER TABLE analytics.applied_events RENAME TO applied_events_legacy")
    op.execute("ALTER TABLE analytics.applied_events_legacy DROP CONSTRAINT applied_events_pkey")
    op.execute(
        "ALTER TABLE analytics.applied_events_legacy "
        "ADD COLUMN occurred_at timestamptz NOT NULL DEFAULT '-infinity'"
    )
    op.execute("ALTER TABLE analytics.applied_events_legacy ALTER COLUMN occurred_at DROP DEFAULT")
    op.execute(
        """
        CREATE TABLE analytics.applied_events (
            event_id     uuid         NOT NULL,
            occurred_at  timestamptz  NOT NULL,
            PRIMARY KEY (event_id, occurred_at)
        ) PARTITION BY RANGE (occurred_at)
        """
    )
    # Ids counted before this migration (if any) stay remembered in a partition that holds
    # everything that occurred before now, until the window has passed over it.
    op.execute(
        """
        DO $$ BEGIN
            IF EXISTS (SELECT 1 FROM analytics.applied_events_legacy) THEN
                ALTER TABLE analytics.applied_events ATTACH PARTITION
                    analytics.applied_events_legacy FOR VALUES FROM (MINVALUE) TO (now());
                INSERT INTO analytics.dedup_partitions
                VALUES ('applied_events_legacy', '-infinity', now());
            ELSE
                DROP TABLE analytics.applied_events_legacy;
            END IF;
        END $$
        """
    )
    op.execute(
        """
        CREATE TABLE analytics.late_events (
            topic            text         NOT NULL,
            kafka_partition  integer      NOT NULL,
            kafka_offset     bigint       NOT NULL,
            event_id         uuid         NOT NULL,
            occurred_at      timestamptz  NOT NULL,
            counted_at       timestamptz  NOT NULL DEFAULT now(),
            PRIMARY KEY (topic, kafka_partition, kafka_offset)
        )
        """
    )
    op.execute("CREATE INDEX late_events_by_age ON analytics.late_events (counted_at)")
    op.execute(
        "ALTER TABLE analytics.applied_batches "
        "ADD COLUMN late_events bigint NOT NULL DEFAULT 0"
    )
    op.execute("CREATE INDEX applied_batches_by_age ON analytics.applied_batches (committed_at)")
    op.execute(DEDUP_SQL.read_text())
    op.execute("REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA analytics FROM PUBLIC")
    op.execute("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA analytics TO onceflow_spark")
    op.execute(
        "GRANT SELECT, INSERT, DELETE, TRUNCATE ON analytics.applied_events, analytics.late_events "
        "TO onceflow_spark"
    )
    op.execute(
        "GRANT SELECT ON analytics.applied_events, analytics.late_events, "
        "analytics.dedup_state, analytics.dedup_partitions TO onceflow_spark, onceflow_analyst"
    )


def downgrade() -> None:
    """Back to one unbounded set of ids (every id still remembered is kept)."""
    op.execute(
        "DROP FUNCTION analytics.dedup_set_width, analytics.dedup_forget, "
        "analytics.dedup_cover, analytics.dedup_bucket, analytics.lock_writers"
    )
    op.execute("DROP TABLE analytics.late_events")
    op.execute("DROP INDEX analytics.applied_batches_by_age")
    op.execute("ALTER TABLE analytics.applied_batches DROP COLUMN late_events")
    op.execute("CREATE TABLE analytics.applied_events_flat (event_id uuid PRIMARY KEY)")
    op.execute(
        "INSERT INTO analytics.applied_events_flat "
        "SELECT DISTINCT event_id FROM analytics.applied_events"
    )
    op.execute("DROP TABLE analytics.applied_events, analytics.dedup_partitions, "
               "analytics.dedup_state")
    op.execute("ALTER TABLE analytics.applied_events_flat RENAME TO applied_events")
    op.execute("ALTER INDEX analytics.applied_events_flat_pkey RENAME TO applied_events_pkey")
    op.execute("GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON analytics.applied_events "
               "TO onceflow_spark")
    op.execute("GRANT SELECT ON analytics.applied_events TO onceflow_analyst")
