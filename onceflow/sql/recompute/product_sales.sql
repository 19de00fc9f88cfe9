-- analytics.product_sales from recompute_events (events.sql): daily_product_sales.sql's rows
-- summed over days (every OrderPlaced and OrderCancelled has a known day).
SELECT sku, currency, sum(units_placed) AS units_placed, sum(placed_cents) AS placed_cents,
    sum(units_cancelled) AS units_cancelled, sum(cancelled_cents) AS cancelled_cents
FROM ({daily_product_sales}) d
GROUP BY sku, currency
