"""The job's executors get a staging-only role (contract v1.2 section 2b, issue 24): they used to
connect as the job's role, which may write the ledger and every analytics table.

The executors' login role (`spark_stage_db_user`, shop_spark_stage locally) joins the NOLOGIN
group onceflow_spark_stage, which provisioning creates (stack/postgres.py, onceflow/schema/
roles.py; docs/operations.md for other environments). That group may only insert into the
staging area, through the view aggregation.staging_inbox (migrations/sql/aggregation/
staging_inbox.sql), which shows no row; the driver keeps the job's role. grants.sql, run again
here, grants it.

A new view and grants: no table is locked beyond a moment's catalog change. The job of the
previous revision writes to staged_records as the job's role and keeps working; the new one
needs this revision (and the group) before it starts. The downgrade drops the view: stop a job
of this revision first.

Revision ID: 0019_executors_stage_role
Revises: 0018_bookkeeping_schema
Create Date: 2026-11-26
"""

from pathlib import Path

from alembic import op

from migrations import grants

revision = "0019_executors_stage_role"
down_revision = "0018_bookkeeping_schema"
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[1] / "sql"


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    op.execute((SQL / "aggregation" / "staging_inbox.sql").read_text())
    grants.grant_again(op, revision)


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    op.execute("DROP VIEW aggregation.staging_inbox")
    op.execute("REVOKE USAGE ON SCHEMA aggregation FROM onceflow_spark_stage")
