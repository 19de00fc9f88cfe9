"""The write functions take the event's type and schema version from the contract (issue 21).

orders.emit_event no longer writes `schema_version` 1 itself and orders.place_order no longer
writes status PLACED and event type OrderPlaced itself: the API passes them from
onceflow/contract.py (services/orders/adapters/calls.py), as it already passed each transition's
rule to orders.transition_order, which now takes the schema version too. The event format is
unchanged. The bodies are replaced from migrations/sql/orders/; a downgrade restores 0012's
from migrations/sql/history/0012/.

The signatures change, so an API started before this migration calls functions that no longer
exist (and a newer API, functions that do not exist yet): apply it before the API that needs it
starts, as `make up` does (it migrates, then starts the API), and restart a running API right
after it. Replacing the functions takes a moment's lock on them, no table is touched.

Revision ID: 0013_event_from_contract
Revises: 0012_content_fingerprints
Create Date: 2026-11-25
"""

from alembic import op

from migrations import functions

revision = "0013_event_from_contract"
down_revision = "0012_content_fingerprints"
branch_labels = None
depends_on = None


def upgrade() -> None:
    functions.replace_all(op)


def downgrade() -> None:
    functions.replace_all(op, earlier=functions.HISTORY / "0012")
