-- A partition of the de-duplication set for every instant the batch's events occurred at.
SELECT analytics.dedup_cover(ARRAY(SELECT DISTINCT analytics.dedup_bucket(occurred_at) FROM t_new))
