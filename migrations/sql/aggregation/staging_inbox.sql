-- The executors' way into the staging area (migration 0019): a view of
-- aggregation.staged_records that shows no row and passes every INSERT on to the table (a view
-- over one table is automatically updatable; without CHECK OPTION, `WHERE false` filters reads
-- only). The executors' group, onceflow_spark_stage, may insert into it and select from it
-- (grants.sql) and holds no privilege on any table: it writes only staged rows and reads none.
-- SELECT on the view is there because Spark's JDBC writer reads the target's columns
-- (`SELECT * FROM <table> WHERE 1=0`) before it writes. A column added to staged_records is added
-- here too (the view's columns are fixed when it is created: CREATE OR REPLACE VIEW again).
CREATE OR REPLACE VIEW aggregation.staging_inbox AS
    SELECT * FROM aggregation.staged_records WHERE false;
COMMENT ON VIEW aggregation.staging_inbox IS
    'The aggregation job''s executors insert staged rows here (into staged_records); shows none';
