-- A new result replaces the last one of every day checked.
WITH gone AS (DELETE FROM reconcile.differences WHERE day BETWEEN %(first)s AND %(last)s)
DELETE FROM reconcile.day_results WHERE day BETWEEN %(first)s AND %(last)s
