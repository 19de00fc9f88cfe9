-- What the metrics and the overview show: differences open (each day's last result), days
-- with differences, and the last run.
SELECT (SELECT coalesce(sum(differences), 0) FROM reconcile.day_results),
    (SELECT count(*) FROM reconcile.day_results WHERE differences > 0),
    r.finished_at, r.days_checked, r.records_read, r.note, r.first_day, r.last_day
FROM (SELECT 1) one
LEFT JOIN LATERAL (SELECT * FROM reconcile.runs ORDER BY run_id DESC LIMIT 1) r ON true
