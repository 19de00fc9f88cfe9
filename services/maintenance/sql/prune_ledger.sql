-- One batch of ledger rows older than the window. Each query's newest batch always stays: after
-- a crash Spark re-runs only its last planned batch, which must still be found in the ledger.
DELETE FROM aggregation.applied_batches
WHERE ctid = ANY (ARRAY(
    SELECT b.ctid FROM aggregation.applied_batches b
    WHERE b.committed_at < now() - %(keep)s::interval
      AND b.batch_id < (SELECT max(n.batch_id) FROM aggregation.applied_batches n
                        WHERE n.query_id = b.query_id)
    LIMIT %(batch)s))
