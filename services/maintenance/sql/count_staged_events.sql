SELECT count(*) FROM analytics.staged_events WHERE staged_at < now() - %(keep)s::interval
