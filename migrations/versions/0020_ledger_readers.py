"""The job's ledger gets read-only readers (contract v1.2 section 2b, issue 24): the dashboard,
onceflow-ops and the reconciler used to connect as the job's role, which may write the ledger and
every analytics table, so every one of them held the job's password.

Two login roles, each in a NOLOGIN group that provisioning creates (stack/postgres.py,
onceflow/schema/roles.py; docs/operations.md for other environments):
- `observer_db_user` (shop_observer locally) in onceflow_observer: SELECT on
  aggregation.applied_batches and applied_events and on the reconciliation's reports
  (reconcile.runs, reconcile.day_results); the dashboard and onceflow-ops overview/trace.
- `reconcile_db_user` (shop_reconcile) in onceflow_reconcile: schema reconcile (migration 0017),
  SELECT on aggregation.applied_batches and analytics.daily_sales, temp tables; the reconciler.
migrations/sql/ledger_readers.sql, run here after grants.sql (migrations/grants.py), grants them
and takes schema reconcile back from onceflow_spark.

Grants only: nothing is locked beyond a moment's catalog change. A reconciler of the previous
revision (connecting as the job's role) is refused schema reconcile from this revision on:
restart the maintenance process with this revision's code. The downgrade gives reconcile back
to the job's role and takes the readers' privileges.

Revision ID: 0020_ledger_readers
Revises: 0019_executors_stage_role
Create Date: 2026-11-26
"""

from alembic import op

from migrations import grants

revision = "0020_ledger_readers"
down_revision = "0019_executors_stage_role"
branch_labels = None
depends_on = None


def upgrade() -> None:
    grants.grant_again(op, revision)


def downgrade() -> None:
    grants.run(op, "ledger_readers_down.sql")
