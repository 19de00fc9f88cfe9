-- The topic's values per (day, currency, event type): events, cents and refunded_cents (an
-- OrderCancelled of an order whose OrderPaid was read, on the cancellation's day).
SELECT e.day, e.currency, e.event_type, count(*) AS events, sum(e.total_cents) AS cents,
    coalesce(sum(e.total_cents) FILTER (
        WHERE e.event_type = %(cancelled)s AND EXISTS (
            SELECT 1 FROM reconcile.topic_events p
            WHERE p.order_id = e.order_id AND p.event_type = %(paid)s)), 0) AS refunded_cents
FROM reconcile.topic_events e
WHERE e.day BETWEEN %(first)s AND %(last)s
GROUP BY e.day, e.currency, e.event_type
