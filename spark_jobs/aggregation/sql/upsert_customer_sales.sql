INSERT INTO analytics.customer_sales AS c (customer_id, currency, orders_placed, placed_cents,
    paid_cents, cancelled_cents, refunded_cents, first_order_at, last_order_at)
SELECT customer_id, currency,
    count(*) FILTER (WHERE event_type = 'OrderPlaced'),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPlaced'), 0),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderPaid'), 0),
    coalesce(sum(total_cents) FILTER (WHERE event_type = 'OrderCancelled'), 0),
    coalesce(sum(refunded_cents), 0),
    min(occurred_at) FILTER (WHERE event_type = 'OrderPlaced'),
    max(occurred_at) FILTER (WHERE event_type = 'OrderPlaced')
FROM (SELECT customer_id, currency, event_type, total_cents, occurred_at,
             NULL::bigint AS refunded_cents FROM t_new
      UNION ALL
      SELECT customer_id, currency, NULL, NULL, NULL, refunded_cents FROM t_refunds) e
GROUP BY customer_id, currency
ON CONFLICT (customer_id, currency) DO UPDATE SET
    orders_placed   = c.orders_placed   + EXCLUDED.orders_placed,
    placed_cents    = c.placed_cents    + EXCLUDED.placed_cents,
    paid_cents      = c.paid_cents      + EXCLUDED.paid_cents,
    cancelled_cents = c.cancelled_cents + EXCLUDED.cancelled_cents,
    refunded_cents  = c.refunded_cents  + EXCLUDED.refunded_cents,
    first_order_at  = LEAST(c.first_order_at, EXCLUDED.first_order_at),
    last_order_at   = GREATEST(c.last_order_at, EXCLUDED.last_order_at)
