-- A partition of the de-duplication set for every instant the batch's events occurred at.
SELECT aggregation.dedup_cover(ARRAY(SELECT DISTINCT aggregation.dedup_bucket(occurred_at) FROM t_new))
