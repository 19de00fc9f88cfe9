-- Ids a run would forget: those in partitions that ended before the window.
SELECT count(*) FROM aggregation.applied_events
WHERE occurred_at < (SELECT max(upper_bound) FROM aggregation.dedup_partitions
                     WHERE upper_bound <= now() - %(keep)s::interval)
