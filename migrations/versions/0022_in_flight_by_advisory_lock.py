"""Only a concurrent request with the same Idempotency-Key is answered 409 request-in-flight.

orders.claim_key set lock_timeout (the API's api_idempotency_wait_ms, 50 ms) around its INSERT
into orders.idempotency_keys to bound the wait for a concurrent holder of the same key, but it
bounded every lock wait of that INSERT: the table's or an index's extension lock (many backends
inserting, the one holding it descheduled on a busy machine), a LOCK TABLE, autovacuum's
truncation. Each became SQLSTATE 55P03, answered 409 for a key nobody else held (seen under
pipeline_bench at 500 orders/s). claim_key now takes a transaction-scoped advisory lock on a
64-bit hash of (scope, key) under that lock_timeout, the one wait it bounds, and inserts under
the session's own (docs/api.md, "Idempotency").

Only claim_key's body changes, not its signature: a running API keeps working, no restart
needed. The bodies are replaced from migrations/sql/orders/; a downgrade restores 0021's
claim_key from migrations/sql/history/0021/. Replacing the functions takes a moment's lock on
them, no table is touched. A request in flight while it runs may have claimed its key without
the advisory lock: a same-key request then waits for it to finish (replay) instead of a 409.

Revision ID: 0022_in_flight_by_advisory_lock
Revises: 0021_maintenance_role
Create Date: 2026-11-26
"""

from alembic import op

from migrations import functions

revision = "0022_in_flight_by_advisory_lock"
down_revision = "0021_maintenance_role"
branch_labels = None
depends_on = None


def upgrade() -> None:
    functions.replace_all(op)


def downgrade() -> None:
    functions.replace_all(op, earlier=functions.HISTORY / "0021")
