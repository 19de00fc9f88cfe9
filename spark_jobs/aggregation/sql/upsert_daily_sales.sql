INSERT INTO analytics.daily_sales AS d (day, currency, orders_placed, orders_paid,
    orders_shipped, orders_cancelled, placed_cents, paid_cents, shipped_cents, cancelled_cents,
    refunded_cents)
SELECT day, currency,
    count(*) FILTER (WHERE event_type = 'OrderPlaced'),
    count(*) FILTER (WHERE event_type = 'OrderPaid'),
    count(*) FILTER (WHERE event_type = 'OrderShipped'),
    count(*) FILTER (WHERE event_type = 'OrderCancelled'),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPlaced'), 0),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPaid'), 0),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderShipped'), 0),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderCancelled'), 0),
    coalesce(sum(refunded_cents), 0)
FROM (SELECT day, currency, event_type, total_cents, NULL::bigint AS refunded_cents FROM t_new
      UNION ALL
      SELECT day, currency, NULL, NULL, refunded_cents FROM t_refunds) e
GROUP BY day, currency
ON CONFLICT (day, currency) DO UPDATE SET
    orders_placed    = d.orders_placed    + EXCLUDED.orders_placed,
    orders_paid      = d.orders_paid      + EXCLUDED.orders_paid,
    orders_shipped   = d.orders_shipped   + EXCLUDED.orders_shipped,
    orders_cancelled = d.orders_cancelled + EXCLUDED.orders_cancelled,
    placed_cents     = d.placed_cents     + EXCLUDED.placed_cents,
    paid_cents       = d.paid_cents       + EXCLUDED.paid_cents,
    shipped_cents    = d.shipped_cents    + EXCLUDED.shipped_cents,
    cancelled_cents  = d.cancelled_cents  + EXCLUDED.cancelled_cents,
    refunded_cents   = d.refunded_cents   + EXCLUDED.refunded_cents
