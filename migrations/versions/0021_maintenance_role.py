"""Maintenance prunes the job's bookkeeping as its own role (contract v1.2 section 2b, issue 24):
it used to connect as the job's role, which may write the ledger and every analytics table, so
the maintenance process held the job's password.

`maintenance_db_user` (shop_maintenance locally) joins the NOLOGIN group onceflow_maintenance,
which provisioning creates (stack/postgres.py, onceflow/schema/roles.py; docs/operations.md for
other environments): SELECT and DELETE on aggregation.applied_batches, late_events and
staged_records (services/maintenance/sql/prune_*.sql), SELECT on applied_events,
dedup_partitions and dedup_state, EXECUTE on the de-duplication set's roll (dedup_bucket,
dedup_cover, dedup_forget, dedup_set_width: the owner's functions). No INSERT or UPDATE anywhere.
migrations/sql/maintenance_role.sql, run here after grants.sql and ledger_readers.sql
(migrations/grants.py), grants them.

Grants only: nothing is locked beyond a moment's catalog change. A maintenance process of the
previous revision (connecting as the job's role) keeps working; this revision's needs the group
before it starts. The downgrade takes the group's privileges.

Revision ID: 0021_maintenance_role
Revises: 0020_ledger_readers
Create Date: 2026-11-26
"""

from alembic import op

from migrations import grants

revision = "0021_maintenance_role"
down_revision = "0020_ledger_readers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    grants.grant_again(op, revision)


def downgrade() -> None:
    grants.run(op, "maintenance_role_down.sql")
