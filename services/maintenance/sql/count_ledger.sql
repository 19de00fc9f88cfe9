SELECT count(*) FROM aggregation.applied_batches b
WHERE b.committed_at < now() - %(keep)s::interval
  AND b.batch_id < (SELECT max(n.batch_id) FROM aggregation.applied_batches n
                    WHERE n.query_id = b.query_id)
