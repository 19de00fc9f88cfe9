INSERT INTO analytics.daily_sales AS d
SELECT day, currency,
    count(*) FILTER (WHERE event_type = 'OrderPlaced'),
    count(*) FILTER (WHERE event_type = 'OrderPaid'),
    count(*) FILTER (WHERE event_type = 'OrderShipped'),
    count(*) FILTER (WHERE event_type = 'OrderCancelled'),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPlaced'), 0),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPaid'), 0),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderCancelled'), 0)
FROM t_new GROUP BY day, currency
ON CONFLICT (day, currency) DO UPDATE SET
    orders_placed    = d.orders_placed    + EXCLUDED.orders_placed,
    orders_paid      = d.orders_paid      + EXCLUDED.orders_paid,
    orders_shipped   = d.orders_shipped   + EXCLUDED.orders_shipped,
    orders_cancelled = d.orders_cancelled + EXCLUDED.orders_cancelled,
    placed_cents     = d.placed_cents     + EXCLUDED.placed_cents,
    paid_cents       = d.paid_cents       + EXCLUDED.paid_cents,
    cancelled_cents  = d.cancelled_cents  + EXCLUDED.cancelled_cents
