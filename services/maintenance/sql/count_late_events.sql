SELECT count(*) FROM analytics.late_events WHERE counted_at < now() - %(keep)s::interval
