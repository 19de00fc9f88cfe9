SELECT count(*) FROM analytics.staged_records WHERE staged_at < now() - %(keep)s::interval
