-- Privileges go to fixed NOLOGIN group roles, never to login roles: a migration then means the
-- same in every environment. Provisioning (stack/postgres.py, or docs/operations.md in
-- production) creates the groups and makes each login role a member of one.
--   onceflow_app      the order API: DML on the order tables, EXECUTE on orders' functions
--   onceflow_cdc      Debezium: read the outbox (plus REPLICATION on its login role)
--   onceflow_spark    the aggregation job: writes analytics and its bookkeeping (schema
--                     aggregation), stages in the staging area (aggregation.staged_records)
--                     and in temp tables
--   onceflow_analyst  analysts: read analytics, and nothing of schema aggregation (no USAGE)
--   onceflow_observer, onceflow_reconcile: read the job's ledger (from migration 0020 on:
--                     ledger_readers.sql)
--   onceflow_maintenance: prune the job's bookkeeping (from migration 0021 on:
--                     maintenance_role.sql)
-- Every block here is guarded by what exists; the groups that came with a migration creating
-- nothing have their own file, which migrations/grants.py runs from that migration on.
GRANT USAGE ON SCHEMA orders TO onceflow_app, onceflow_cdc;
GRANT SELECT, INSERT, UPDATE, DELETE
    ON orders.orders, orders.order_items, orders.outbox, orders.idempotency_keys TO onceflow_app;
GRANT SELECT ON orders.outbox TO onceflow_cdc;
-- The API only reads clients and keys and records when a key was last used; clients and keys
-- are created and revoked by ops (onceflow-ops clients, as the schema owner). The tables exist
-- from migration 0006, which runs this file again.
DO $$ BEGIN
    IF to_regclass('orders.api_keys') IS NOT NULL THEN
        GRANT SELECT ON orders.clients TO onceflow_app;
        GRANT SELECT, UPDATE (last_used_at) ON orders.api_keys TO onceflow_app;
    END IF;
END $$;

REVOKE ALL ON SCHEMA analytics FROM PUBLIC;
GRANT USAGE ON SCHEMA analytics TO onceflow_spark, onceflow_analyst;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA analytics TO onceflow_spark;
GRANT SELECT ON ALL TABLES IN SCHEMA analytics TO onceflow_spark, onceflow_analyst;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON analytics.order_status_counts FROM onceflow_spark;
-- The job's bookkeeping (schema aggregation from migration 0018, which runs this file again;
-- before it, the tables sat in analytics): the job's alone. Analysts get no USAGE on the schema
-- and no privilege on its tables (those moved out of analytics carried their grants with them),
-- so they neither see nor read it; the view analytics.order_status_counts reads order_state
-- with its owner's privileges.
DO $$ BEGIN
    IF to_regnamespace('aggregation') IS NOT NULL THEN
        REVOKE ALL ON SCHEMA aggregation FROM PUBLIC;
        GRANT USAGE ON SCHEMA aggregation TO onceflow_spark;
        REVOKE ALL ON ALL TABLES IN SCHEMA aggregation FROM onceflow_analyst;
        GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA aggregation
            TO onceflow_spark;
        REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA aggregation FROM PUBLIC, onceflow_analyst;
        GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA aggregation TO onceflow_spark;
    END IF;
END $$;
-- The staging area (from migration 0010, which runs this file again; in aggregation from 0018):
-- the job inserts, reads and deletes batches in flight; analysts have nothing to read there.
DO $$
DECLARE area regclass := coalesce(to_regclass('aggregation.staged_records'),
                                  to_regclass('analytics.staged_records'));
BEGIN
    IF area IS NOT NULL THEN
        EXECUTE format('REVOKE ALL ON %s FROM onceflow_spark, onceflow_analyst', area);
        EXECUTE format('GRANT SELECT, INSERT, DELETE ON %s TO onceflow_spark', area);
    END IF;
END $$;
-- The job's executors (from migration 0019): onceflow_spark_stage may only insert into the
-- staging area, through the view aggregation.staging_inbox, which shows no row
-- (migrations/sql/aggregation/staging_inbox.sql). No privilege on any table, the staging area's
-- included.
DO $$ BEGIN
    IF to_regclass('aggregation.staging_inbox') IS NOT NULL THEN
        GRANT USAGE ON SCHEMA aggregation TO onceflow_spark_stage;
        REVOKE ALL ON aggregation.staging_inbox FROM onceflow_spark, onceflow_analyst;
        GRANT SELECT, INSERT ON aggregation.staging_inbox TO onceflow_spark_stage;
    END IF;
END $$;
DO $$ BEGIN
    EXECUTE format('GRANT TEMPORARY ON DATABASE %I TO onceflow_spark', current_database());
END $$;

-- Databases migrated before 0003 granted to the login roles directly: take those back, so the
-- groups are the only path to a privilege.
DO $$
DECLARE g record;
BEGIN
    FOR g IN SELECT DISTINCT grantee, table_schema, table_name
             FROM information_schema.role_table_grants
             WHERE table_schema IN ('orders', 'analytics', 'aggregation')
               AND grantee NOT IN ('onceflow_app', 'onceflow_cdc', 'onceflow_spark',
                                   'onceflow_spark_stage', 'onceflow_observer',
                                   'onceflow_reconcile', 'onceflow_maintenance',
                                   'onceflow_analyst', current_user) LOOP
        EXECUTE format('REVOKE ALL ON %I.%I FROM %I', g.table_schema, g.table_name, g.grantee);
    END LOOP;
END $$;
