SELECT count(*) FROM aggregation.staged_records WHERE staged_at < now() - %(keep)s::interval
