-- Durable de-duplication, step 1: the batch's new event ids that an earlier batch counted, with
-- the content fingerprints it remembered (NULL: remembered before migration 0012, unknown).
-- Looked up by event id alone: a copy with another occurred_at is the same event id.
INSERT INTO t_counted
SELECT n.event_id, array_remove(array_agg(a.fingerprint), NULL), bool_or(a.fingerprint IS NULL)
FROM t_new n JOIN aggregation.applied_events a ON a.event_id = n.event_id
GROUP BY n.event_id
