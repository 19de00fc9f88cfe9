-- analytics.daily_product_sales from recompute_events (events.sql) and the orders' items.
SELECT e.day, i.sku, e.currency,
    coalesce(sum(i.quantity) FILTER (WHERE e.event_type = 'OrderPlaced'), 0) AS units_placed,
    coalesce(sum(i.quantity::bigint * i.unit_price_cents)
             FILTER (WHERE e.event_type = 'OrderPlaced'), 0) AS placed_cents,
    coalesce(sum(i.quantity) FILTER (WHERE e.event_type = 'OrderCancelled'), 0)
        AS units_cancelled,
    coalesce(sum(i.quantity::bigint * i.unit_price_cents)
             FILTER (WHERE e.event_type = 'OrderCancelled'), 0) AS cancelled_cents
FROM recompute_events e JOIN orders.order_items i ON i.order_id = e.order_uuid
WHERE e.event_type IN ('OrderPlaced', 'OrderCancelled')
GROUP BY e.day, i.sku, e.currency
