INSERT INTO analytics.daily_product_sales AS p (day, sku, currency, units_placed, placed_cents,
    units_cancelled, cancelled_cents)
SELECT day, sku, currency, units_placed, placed_cents, units_cancelled, cancelled_cents
FROM t_products
ON CONFLICT (day, sku, currency) DO UPDATE SET
    units_placed    = p.units_placed    + EXCLUDED.units_placed,
    placed_cents    = p.placed_cents    + EXCLUDED.placed_cents,
    units_cancelled = p.units_cancelled + EXCLUDED.units_cancelled,
    cancelled_cents = p.cancelled_cents + EXCLUDED.cancelled_cents
