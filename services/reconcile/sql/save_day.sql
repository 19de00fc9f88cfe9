INSERT INTO reconcile.day_results (day, checked_at, run_id, differences)
VALUES (%(day)s, now(), %(run_id)s, %(differences)s)
