-- Each order's latest event on the topic (by occurred_at, then the status rank of its type),
-- for the orders with an event on or after the first day checked.
SELECT DISTINCT ON (order_id) order_id, day, currency, event_type
FROM reconcile.topic_events
WHERE day >= %(first)s
ORDER BY order_id, occurred_at DESC,
    (%(ranks)s::int[])[array_position(%(types)s::text[], event_type)] DESC
