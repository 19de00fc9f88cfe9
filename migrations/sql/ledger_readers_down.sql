-- Migration 0020's downgrade: schema reconcile is the job's role's again (as migration 0017
-- granted it), and the ledger's readers hold nothing.
GRANT USAGE ON SCHEMA reconcile TO onceflow_spark;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA reconcile TO onceflow_spark;
REVOKE ALL ON ALL TABLES IN SCHEMA reconcile, aggregation FROM onceflow_observer, onceflow_reconcile;
REVOKE ALL ON SCHEMA reconcile, aggregation FROM onceflow_observer, onceflow_reconcile;
REVOKE SELECT ON analytics.daily_sales FROM onceflow_reconcile;
REVOKE USAGE ON SCHEMA analytics FROM onceflow_reconcile;
DO $$ BEGIN
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM onceflow_reconcile', current_database());
END $$;
