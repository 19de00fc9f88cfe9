-- How many of the aggregation stage's dead letters that pass `list`'s filters have each reason.
SELECT error, count(*), max(received_at)
  FROM analytics.dead_letters
 WHERE (%(since)s::timestamptz IS NULL OR received_at >= %(since)s::timestamptz)
   AND (%(reason)s::text IS NULL OR strpos(lower(error), lower(%(reason)s::text)) > 0)
 GROUP BY error
