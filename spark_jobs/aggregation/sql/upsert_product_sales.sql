INSERT INTO analytics.product_sales AS p (sku, currency, units_placed, placed_cents,
    units_cancelled, cancelled_cents)
SELECT sku, currency, sum(units_placed), sum(placed_cents), sum(units_cancelled),
    sum(cancelled_cents)
FROM t_products GROUP BY sku, currency
ON CONFLICT (sku, currency) DO UPDATE SET
    units_placed    = p.units_placed    + EXCLUDED.units_placed,
    placed_cents    = p.placed_cents    + EXCLUDED.placed_cents,
    units_cancelled = p.units_cancelled + EXCLUDED.units_cancelled,
    cancelled_cents = p.cancelled_cents + EXCLUDED.cancelled_cents
