-- Remember the new events' ids (writers are serialised by analytics.lock_writers(): a conflict
-- would be a bug, so there is no ON CONFLICT clause; it would abort and retry the batch).
INSERT INTO analytics.applied_events (event_id, occurred_at)
SELECT event_id, occurred_at FROM t_new
WHERE occurred_at >= (SELECT forgotten_before FROM analytics.dedup_state)
