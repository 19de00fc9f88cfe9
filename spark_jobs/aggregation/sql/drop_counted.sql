-- Durable de-duplication: drop the events an earlier batch counted. Every copy of an event has
-- the same (event_id, occurred_at); ids counted before migration 0005 have occurred_at -infinity.
DELETE FROM t_new n USING analytics.applied_events a
WHERE a.event_id = n.event_id AND a.occurred_at IN (n.occurred_at, '-infinity')
