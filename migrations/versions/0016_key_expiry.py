"""API keys may expire (contract §2b): orders.api_keys.expires_at, NULL for a key that never
does. `onceflow-ops clients rotate --overlap` sets it on a client's older keys, `clients create`
and `rotate` with `--expires-in` on the new one; the API treats a key past it as unknown (401).

Adding a nullable column without a default only changes the catalog (no rewrite, a moment's
ACCESS EXCLUSIVE lock, bounded by lock_timeout). The API role reads the table already (SELECT on
the whole table). IF NOT EXISTS: the column may have been added by hand ahead of the revision.

Revision ID: 0016_key_expiry
Revises: 0015_money_per_currency
Create Date: 2026-11-25
"""

from alembic import op

revision = "0016_key_expiry"
down_revision = "0015_money_per_currency"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    op.execute("ALTER TABLE orders.api_keys ADD COLUMN IF NOT EXISTS expires_at timestamptz")
    op.execute(
        "COMMENT ON COLUMN orders.api_keys.expires_at IS "
        "'When the key stops working (NULL: never); set by clients rotate --overlap'"
    )


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    op.execute("ALTER TABLE orders.api_keys DROP COLUMN expires_at")
