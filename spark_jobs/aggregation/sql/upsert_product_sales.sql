INSERT INTO analytics.product_sales AS p
SELECT i.sku,
    coalesce(sum(i.quantity) FILTER (WHERE n.event_type = 'OrderPlaced'), 0),
    coalesce(sum(i.quantity * i.unit_price_cents)
             FILTER (WHERE n.event_type = 'OrderPlaced'), 0),
    coalesce(sum(i.quantity) FILTER (WHERE n.event_type = 'OrderCancelled'), 0),
    coalesce(sum(i.quantity * i.unit_price_cents)
             FILTER (WHERE n.event_type = 'OrderCancelled'), 0)
FROM t_new n,
    -- items is null except on the events product_sales counts (staging.counted_items)
    jsonb_to_recordset(n.items) AS i(sku text, quantity bigint, unit_price_cents bigint)
GROUP BY i.sku
ON CONFLICT (sku) DO UPDATE SET
    units_placed    = p.units_placed    + EXCLUDED.units_placed,
    placed_cents    = p.placed_cents    + EXCLUDED.placed_cents,
    units_cancelled = p.units_cancelled + EXCLUDED.units_cancelled,
    cancelled_cents = p.cancelled_cents + EXCLUDED.cancelled_cents
