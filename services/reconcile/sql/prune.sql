-- What is older than the days kept: events read, runs, and days' results.
WITH events AS (
    DELETE FROM reconcile.topic_events WHERE day < current_date - %(keep_days)s::int
), runs AS (
    DELETE FROM reconcile.runs WHERE finished_at < now() - make_interval(days => %(keep_days)s)
), differences AS (
    DELETE FROM reconcile.differences WHERE day IN (
        SELECT day FROM reconcile.day_results
        WHERE checked_at < now() - make_interval(days => %(keep_days)s))
)
DELETE FROM reconcile.day_results WHERE checked_at < now() - make_interval(days => %(keep_days)s)
