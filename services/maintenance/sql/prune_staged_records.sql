-- One batch of the job's staged rows older than the window: batches of a query that no longer
-- runs (a running query deletes its own when it folds them).
DELETE FROM aggregation.staged_records
WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM aggregation.staged_records
    WHERE staged_at < now() - %(keep)s::interval
    LIMIT %(batch)s))
