INSERT INTO analytics.customer_sales AS c
SELECT customer_id,
    count(*) FILTER (WHERE event_type = 'OrderPlaced'),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPlaced'), 0),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPaid'), 0),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderCancelled'), 0),
    min(occurred_at) FILTER (WHERE event_type = 'OrderPlaced'),
    max(occurred_at) FILTER (WHERE event_type = 'OrderPlaced')
FROM t_new GROUP BY customer_id
ON CONFLICT (customer_id) DO UPDATE SET
    orders_placed   = c.orders_placed   + EXCLUDED.orders_placed,
    placed_cents    = c.placed_cents    + EXCLUDED.placed_cents,
    paid_cents      = c.paid_cents      + EXCLUDED.paid_cents,
    cancelled_cents = c.cancelled_cents + EXCLUDED.cancelled_cents,
    first_order_at  = LEAST(c.first_order_at, EXCLUDED.first_order_at),
    last_order_at   = GREATEST(c.last_order_at, EXCLUDED.last_order_at)
