-- analytics.daily_sales from recompute_events (events.sql). A payment whose day is no longer
-- known (a SHIPPED order's, outside the journeys) falls on no day.
SELECT day, currency,
    count(*) FILTER (WHERE event_type = 'OrderPlaced') AS orders_placed,
    count(*) FILTER (WHERE event_type = 'OrderPaid') AS orders_paid,
    count(*) FILTER (WHERE event_type = 'OrderShipped') AS orders_shipped,
    count(*) FILTER (WHERE event_type = 'OrderCancelled') AS orders_cancelled,
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPlaced'), 0) AS placed_cents,
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPaid'), 0) AS paid_cents,
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderShipped'), 0) AS shipped_cents,
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderCancelled'), 0)
        AS cancelled_cents,
    coalesce(sum(total_cents) FILTER (WHERE of_paid), 0) AS refunded_cents
FROM recompute_events
WHERE day IS NOT NULL
GROUP BY day, currency
