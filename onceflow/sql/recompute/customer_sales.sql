-- analytics.customer_sales from recompute_events (events.sql).
SELECT customer_id, currency,
    count(*) FILTER (WHERE event_type = 'OrderPlaced') AS orders_placed,
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPlaced'), 0) AS placed_cents,
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPaid'), 0) AS paid_cents,
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderCancelled'), 0)
        AS cancelled_cents,
    coalesce(sum(total_cents) FILTER (WHERE of_paid), 0) AS refunded_cents,
    min(occurred_at) FILTER (WHERE event_type = 'OrderPlaced') AS first_order_at,
    max(occurred_at) FILTER (WHERE event_type = 'OrderPlaced') AS last_order_at
FROM recompute_events
GROUP BY customer_id, currency
