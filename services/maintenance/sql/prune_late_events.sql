-- One batch of late-event traces older than the window.
DELETE FROM analytics.late_events
WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM analytics.late_events
    WHERE counted_at < now() - %(keep)s::interval
    LIMIT %(batch)s))
