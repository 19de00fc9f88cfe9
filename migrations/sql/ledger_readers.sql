-- Migration 0020's grants (and every later migration's, as migrations/grants.py runs them after
-- grants.sql): who reads the job's ledger without writing it; the job's role is the job's alone.
--   onceflow_observer   the dashboard and onceflow-ops (overview, trace): SELECT on the ledger
--                       (how far the job got, an order's applied events) and on the
--                       reconciliation's reports; nothing else of either schema
--   onceflow_reconcile  the reconciler: its own schema (reconcile), the ledger's positions and
--                       the analytics table it compares; temp tables for what it reads
-- Schema reconcile (migration 0017) was the job's role's until 0020: taken back.
-- As migration 0020 wrote it, never edited: replaying 0020 runs this file, so a change
-- here would change what 0020 grants. A later migration's change to these groups goes
-- into a block of grants.sql guarded by what it creates, or a file of its own in
-- migrations/grants.py's SINCE.
GRANT USAGE ON SCHEMA aggregation, reconcile TO onceflow_observer, onceflow_reconcile;
GRANT SELECT ON aggregation.applied_batches, aggregation.applied_events,
    reconcile.runs, reconcile.day_results TO onceflow_observer;
GRANT SELECT ON aggregation.applied_batches TO onceflow_reconcile;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA reconcile TO onceflow_reconcile;
GRANT USAGE ON SCHEMA analytics TO onceflow_reconcile;
GRANT SELECT ON analytics.daily_sales TO onceflow_reconcile;
REVOKE ALL ON ALL TABLES IN SCHEMA reconcile FROM onceflow_spark;
REVOKE ALL ON SCHEMA reconcile FROM onceflow_spark;
DO $$ BEGIN
    EXECUTE format('GRANT TEMPORARY ON DATABASE %I TO onceflow_reconcile', current_database());
END $$;
