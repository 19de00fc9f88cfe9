"""No vacuum truncation on the tables whose rows come and go all day.

Autovacuum truncating the empty tail of a table takes an ACCESS EXCLUSIVE lock. On
orders.idempotency_keys (rows purged by maintenance) that lock made concurrent claims of new
keys wait past the claim's lock_timeout, and the API answered a false 409 "request in flight"
(5 of 720,000 soak requests). The outbox (each row inserted and deleted at once), the heartbeat
and the tables the maintenance process prunes churn the same way. Their freed pages are reused
by the next inserts, so keeping them costs no growth.

Revision ID: 0007_no_vacuum_truncate
Revises: 0006_clients
Create Date: 2026-11-23
"""

from alembic import op

revision = "0007_no_vacuum_truncate"
down_revision = "0006_clients"
branch_labels = None
depends_on = None

TABLES = (
    "orders.idempotency_keys",
    "orders.outbox",
    "orders.heartbeat",
    "analytics.applied_batches",
    "analytics.late_events",
)


def upgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} SET (vacuum_truncate = off)")


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} RESET (vacuum_truncate)")
