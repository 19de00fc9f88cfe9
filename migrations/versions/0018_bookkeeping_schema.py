"""The job's bookkeeping moves out of the reporting schema into schema `aggregation` (contract
v1.2 sections 2 and 5: the analyst sees only the reporting relations).

applied_batches (the ledger), applied_events and its partitions (the de-duplication set),
dedup_state, dedup_partitions, late_events, order_state and the staging area staged_records
move with ALTER TABLE ... SET SCHEMA: a catalog change, in place, no row copied; indexes,
constraints and grants go with each table. The view analytics.order_status_counts follows
order_state by its oid and reads it with its owner's privileges, so analysts still read it. The
functions (lock_writers, dedup_*) move too and take their bodies from
migrations/sql/aggregation/dedup.sql (the plpgsql ones name their tables in text). grants.sql
then gives the job's group USAGE on aggregation and everything it had there, and takes from the
analysts every privilege the moved tables carried: onceflow_analyst has no USAGE on the schema.

Run by the schema owner, under the writers' lock (so between two of the job's folds), each table
lock bounded by lock_timeout. A job, maintenance process or ops reader of the previous version
names the old tables and fails its next statement (nothing half-written: the fold is one
transaction): after `alembic upgrade head`, restart the aggregation job and the maintenance
process (docs/operations.md, "Upgrading"); the job re-runs its batch from its checkpoint and the
ledger says it was not applied. The downgrade moves everything back.

Revision ID: 0018_bookkeeping_schema
Revises: 0017_reconcile
Create Date: 2026-11-26
"""

from pathlib import Path

from alembic import op

from migrations import grants

revision = "0018_bookkeeping_schema"
down_revision = "0017_reconcile"
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[1] / "sql"
# Before: the scripts of migrations 0005 and 0008 as they ran, in schema analytics.
EARLIER = SQL / "history" / "0017"
TABLES = (
    "applied_batches",
    "applied_events",
    "dedup_state",
    "dedup_partitions",
    "late_events",
    "order_state",
    "staged_records",
)
FUNCTIONS = (
    "lock_writers()",
    "dedup_bucket(timestamptz)",
    "dedup_cover(timestamptz[])",
    "dedup_forget(timestamptz)",
    "dedup_set_width(interval)",
)
# Partitions of applied_events (dedup_cover's, and 0005's applied_events_legacy) are tables of
# their own: SET SCHEMA on the parent leaves them behind.
MOVE_PARTITIONS = """
DO $$
DECLARE part text;
BEGIN
    FOR part IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = '{to}.applied_events'::regclass
                  AND c.relnamespace = '{source}'::regnamespace LOOP
        EXECUTE format('ALTER TABLE {source}.%I SET SCHEMA {to}', part);
    END LOOP;
END $$
"""


def _move(source: str, to: str) -> None:
    op.execute("SET LOCAL lock_timeout = '10s'")
    op.execute(f"SELECT {source}.lock_writers()")
    for table in TABLES:
        op.execute(f"ALTER TABLE {source}.{table} SET SCHEMA {to}")
    op.execute(MOVE_PARTITIONS.format(source=source, to=to))
    for function in FUNCTIONS:
        op.execute(f"ALTER FUNCTION {source}.{function} SET SCHEMA {to}")


def upgrade() -> None:
    op.execute("CREATE SCHEMA aggregation")
    _move("analytics", "aggregation")
    op.execute((SQL / "aggregation" / "dedup.sql").read_text())
    grants.grant_again(op, revision)


def downgrade() -> None:
    _move("aggregation", "analytics")
    op.execute(f"DROP FUNCTION analytics.{', analytics.'.join(FUNCTIONS)}")
    op.execute((EARLIER / "dedup.sql").read_text())
    op.execute((EARLIER / "dedup_set_width.sql").read_text())
    op.execute("REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA analytics FROM PUBLIC")
    op.execute("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA analytics TO onceflow_spark")
    op.execute("DROP SCHEMA aggregation")
    grants.grant_again(op, down_revision)
