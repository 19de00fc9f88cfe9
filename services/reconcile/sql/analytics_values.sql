SELECT day, currency, orders_placed, orders_paid, orders_shipped, orders_cancelled, placed_cents,
    paid_cents, shipped_cents, cancelled_cents, refunded_cents
FROM analytics.daily_sales
WHERE day BETWEEN %(first)s AND %(last)s
