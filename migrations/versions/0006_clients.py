"""API clients and keys; every order belongs to a client (contract section 3, v1.1).

Safe on a populated orders table: the column is added nullable (no rewrite), backfilled to the
client `legacy` in short batches that each commit, then made NOT NULL through a CHECK added
NOT VALID and validated separately (validation takes SHARE UPDATE EXCLUSIVE, which lets
writes through; SET NOT NULL then trusts the validated CHECK instead of scanning under ACCESS
EXCLUSIVE). The foreign key follows the same two steps; the index is built CONCURRENTLY.
The write functions take the client (migrations/sql/orders/); the event format is unchanged.

Revision ID: 0006_clients
Revises: 0005_bounded_dedup
Create Date: 2026-11-23
"""

from pathlib import Path

from alembic import op
from sqlalchemy import text

from migrations import functions

revision = "0006_clients"
down_revision = "0005_bounded_dedup"
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[1] / "sql"


def upgrade() -> None:
    op.execute((SQL / "clients.sql").read_text())
    op.execute("ALTER TABLE orders.orders ADD COLUMN client_id uuid")
    functions.replace_all(op)
    op.execute((SQL / "grants.sql").read_text())
    with op.get_context().autocommit_block():
        backfill = text((SQL / "backfill_client.sql").read_text())
        while op.get_bind().execute(backfill).rowcount:
            pass
        op.execute(
            "ALTER TABLE orders.orders ADD CONSTRAINT orders_client_id_not_null "
            "CHECK (client_id IS NOT NULL) NOT VALID"
        )
        op.execute("ALTER TABLE orders.orders VALIDATE CONSTRAINT orders_client_id_not_null")
        op.execute("ALTER TABLE orders.orders ALTER COLUMN client_id SET NOT NULL")
        op.execute("ALTER TABLE orders.orders DROP CONSTRAINT orders_client_id_not_null")
        op.execute(
            "ALTER TABLE orders.orders ADD CONSTRAINT orders_client_id_fkey "
            "FOREIGN KEY (client_id) REFERENCES orders.clients (id) NOT VALID"
        )
        op.execute("ALTER TABLE orders.orders VALIDATE CONSTRAINT orders_client_id_fkey")
        op.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_by_client "
            "ON orders.orders (client_id, created_at DESC, id DESC)"
        )


def downgrade() -> None:
    functions.replace_all(op, earlier=functions.HISTORY / "0005")
    op.execute("ALTER TABLE orders.orders DROP COLUMN client_id")
    op.execute("DROP TABLE orders.api_keys, orders.clients")
