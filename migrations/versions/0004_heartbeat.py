"""A heartbeat table in the outbox's publication, so the replication slot advances while no
order changes (contract section 5, "Bounded state").

Debezium runs `heartbeat.action.query` (connect/orders-outbox.json) every heartbeat interval:
it inserts a row and deletes it at once, like the outbox. The insert reaches the connector
through the publication; the connector filters it out (table.include.list is the outbox
only), but its LSN goes into the next committed offset, and the slot is confirmed up to it.

Revision ID: 0004_heartbeat
Revises: 0003_functions_and_group_roles
Create Date: 2026-11-23
"""

from alembic import op

revision = "0004_heartbeat"
down_revision = "0003_functions_and_group_roles"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Re-runnable (0003 is re-applied by `alembic stamp 0002_analytics && alembic upgrade head`
    # while function bodies change): nothing here fails when it is already in place.
    op.execute("CREATE TABLE IF NOT EXISTS orders.heartbeat (beat_at timestamptz PRIMARY KEY)")
    op.execute(
        """
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = 'onceflow_outbox'
                           AND schemaname = 'orders' AND tablename = 'heartbeat') THEN
                ALTER PUBLICATION onceflow_outbox ADD TABLE orders.heartbeat;
            END IF;
        END $$
        """
    )
    op.execute("GRANT INSERT, DELETE ON orders.heartbeat TO onceflow_cdc")


def downgrade() -> None:
    op.execute("ALTER PUBLICATION onceflow_outbox DROP TABLE orders.heartbeat")
    op.execute("DROP TABLE orders.heartbeat")
