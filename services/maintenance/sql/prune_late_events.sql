-- One batch of late-event traces older than the window.
DELETE FROM aggregation.late_events
WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM aggregation.late_events
    WHERE counted_at < now() - %(keep)s::interval
    LIMIT %(batch)s))
