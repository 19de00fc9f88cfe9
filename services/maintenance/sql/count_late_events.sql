SELECT count(*) FROM aggregation.late_events WHERE counted_at < now() - %(keep)s::interval
