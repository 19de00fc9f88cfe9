-- The batch's items per UTC day, SKU and currency (the rows daily_product_sales gains, and
-- summed over days, product_sales'): OrderPlaced and OrderCancelled items only.
INSERT INTO t_products (day, sku, currency, units_placed, placed_cents, units_cancelled,
    cancelled_cents)
SELECT n.day, i.sku, n.currency,
    coalesce(sum(i.quantity) FILTER (WHERE n.event_type = 'OrderPlaced'), 0),
    coalesce(sum(i.quantity * i.unit_price_cents)
             FILTER (WHERE n.event_type = 'OrderPlaced'), 0),
    coalesce(sum(i.quantity) FILTER (WHERE n.event_type = 'OrderCancelled'), 0),
    coalesce(sum(i.quantity * i.unit_price_cents)
             FILTER (WHERE n.event_type = 'OrderCancelled'), 0)
FROM t_new n,
    -- items is null except on the events product_sales counts (render.counted_items)
    jsonb_to_recordset(n.items) AS i(sku text, quantity bigint, unit_price_cents bigint)
GROUP BY n.day, i.sku, n.currency
