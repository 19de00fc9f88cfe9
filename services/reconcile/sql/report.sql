-- The last result of every day from %(first)s to %(last)s: its differences, each with the
-- orders it names.
SELECT d.day, d.currency, d.event_type, d.measure, d.orders_value, d.topic_value,
    d.analytics_value, d.order_ids, d.orders_involved
FROM reconcile.differences d
WHERE d.day BETWEEN %(first)s AND %(last)s
ORDER BY d.day, d.currency, d.event_type, d.measure
