-- Returns the newest occurred_at ever applied (the job's freshness metric, without a query).
INSERT INTO analytics.freshness AS f (stream, last_event_at, last_applied_at, events_applied)
SELECT %(stream)s, max(occurred_at), clock_timestamp(), count(*) FROM t_new
ON CONFLICT (stream) DO UPDATE SET
    last_event_at   = GREATEST(f.last_event_at, EXCLUDED.last_event_at),
    last_applied_at = EXCLUDED.last_applied_at,
    events_applied  = f.events_applied + EXCLUDED.events_applied
RETURNING last_event_at
