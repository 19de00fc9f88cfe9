-- Migration 0021's grants (and every later migration's, as migrations/grants.py runs them after
-- grants.sql): maintenance's prunes of the job's bookkeeping. onceflow_maintenance deletes what
-- is past its window from the ledger, the late events and the staging area
-- (services/maintenance/sql/), and rolls the de-duplication set's partitions through the
-- owner's functions; it inserts and updates nothing.
-- As migration 0021 wrote it, never edited: replaying 0021 runs this file, so a change
-- here would change what 0021 grants. A later migration's change to these groups goes
-- into a block of grants.sql guarded by what it creates, or a file of its own in
-- migrations/grants.py's SINCE.
GRANT USAGE ON SCHEMA aggregation TO onceflow_maintenance;
GRANT SELECT, DELETE ON aggregation.applied_batches, aggregation.late_events,
    aggregation.staged_records TO onceflow_maintenance;
GRANT SELECT ON aggregation.applied_events, aggregation.dedup_partitions,
    aggregation.dedup_state TO onceflow_maintenance;
GRANT EXECUTE ON FUNCTION aggregation.dedup_bucket(timestamptz),
    aggregation.dedup_cover(timestamptz[]), aggregation.dedup_forget(timestamptz),
    aggregation.dedup_set_width(interval) TO onceflow_maintenance;
