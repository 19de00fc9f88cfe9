"""An order's updated_at, and so its events' occurred_at, strictly increase with each change.

orders.transition_order set `updated_at = now()`, the start of its transaction. Under READ
COMMITTED a transition whose transaction started before another one's can see that one
committed and change the order after it (a cancel of an order that was paid meanwhile): its
updated_at, and its event's occurred_at, went backwards, and the aggregation job, which moves
analytics.order_state only to a later event, kept the earlier status. It now sets
`greatest(clock_timestamp(), updated_at + 1 microsecond)`: the clock as the row is updated, and
never at or before the change it replaces. orders.place_order keeps now() (a new row).

Only transition_order's body changes, not its signature: a running API keeps working, no
restart needed. The bodies are replaced from migrations/sql/orders/; a downgrade restores 0013's
transition_order from migrations/sql/history/0013/. Replacing the functions takes a moment's
lock on them, no table is touched.

Revision ID: 0014_monotonic_updated_at
Revises: 0013_event_from_contract
Create Date: 2026-11-25
"""

from alembic import op

from migrations import functions

revision = "0014_monotonic_updated_at"
down_revision = "0013_event_from_contract"
branch_labels = None
depends_on = None


def upgrade() -> None:
    functions.replace_all(op)


def downgrade() -> None:
    functions.replace_all(op, earlier=functions.HISTORY / "0013")
