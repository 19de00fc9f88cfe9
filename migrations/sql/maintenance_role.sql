-- Migration 0021's grants (and every later migration's, as migrations/grants.py runs them after
-- grants.sql): maintenance's prunes of the job's bookkeeping. onceflow_maintenance deletes what
-- is past its window from the ledger, the late events and the staging area
-- (services/maintenance/sql/), and rolls the de-duplication set's partitions through the
-- owner's functions; it inserts and updates nothing.
GRANT USAGE ON SCHEMA aggregation TO onceflow_maintenance;
GRANT SELECT, DELETE ON aggregation.applied_batches, aggregation.late_events,
    aggregation.staged_records TO onceflow_maintenance;
GRANT SELECT ON aggregation.applied_events, aggregation.dedup_partitions,
    aggregation.dedup_state TO onceflow_maintenance;
GRANT EXECUTE ON FUNCTION aggregation.dedup_bucket(timestamptz),
    aggregation.dedup_cover(timestamptz[]), aggregation.dedup_forget(timestamptz),
    aggregation.dedup_set_width(interval) TO onceflow_maintenance;
