SELECT count(*) FROM analytics.staged_dead_letters WHERE staged_at < now() - %(keep)s::interval
