INSERT INTO reconcile.runs (started_at, finished_at, first_day, last_day, days_checked,
    records_read, differences, note)
VALUES (%(started_at)s, now(), %(first)s, %(last)s, %(days)s, %(records)s, %(differences)s,
    %(note)s)
RETURNING run_id, finished_at
