-- The events the aggregation job has counted, as far as the database still knows them: one row
-- per (order, event type), the input of every recompute (docs/analytics.md, "Recomputing the
-- tables"; the caller materialises it as temp table recompute_events). {applied_events} and
-- {order_state} name the job's bookkeeping tables, wherever its schema is (onceflow/recompute.py).
-- Sources, best first:
-- 1. the de-duplication set's journeys (applied_events, since migration 0009, within
--    the de-duplication window): each counted event's order, type and occurred_at, exactly;
-- 2. each counted order's latest status (order_state): its OrderPlaced occurred at
--    the order's created_at, its latest event at last_event_at, and a SHIPPED order was paid,
--    at an instant no longer known (occurred_at and day NULL);
-- the order's customer, currency, total and items come from schema orders (they never change
-- after it is placed). Events of orders that schema does not hold cannot be recomputed.
-- A cancellation is a refund when the order's OrderPaid is known (of_paid).
WITH journey AS (
    SELECT DISTINCT ON (order_id, event_type) order_id, event_type, occurred_at
    FROM {applied_events}
    WHERE order_id IS NOT NULL AND event_type IS NOT NULL
    ORDER BY order_id, event_type, occurred_at
), latest AS (
    SELECT s.order_id, 'OrderPlaced' AS event_type, o.created_at AS occurred_at
    FROM {order_state} s JOIN orders.orders o ON o.id::text = s.order_id
    UNION ALL
    SELECT order_id,
        CASE status WHEN 'PAID' THEN 'OrderPaid' WHEN 'SHIPPED' THEN 'OrderShipped'
                    ELSE 'OrderCancelled' END,
        last_event_at
    FROM {order_state} WHERE status <> 'PLACED'
    UNION ALL
    SELECT order_id, 'OrderPaid', NULL FROM {order_state} WHERE status = 'SHIPPED'
), counted AS (
    SELECT order_id, event_type, occurred_at FROM journey
    UNION ALL
    SELECT l.order_id, l.event_type, l.occurred_at FROM latest l
    WHERE NOT EXISTS (SELECT 1 FROM journey j
                      WHERE j.order_id = l.order_id AND j.event_type = l.event_type)
)
SELECT o.id AS order_uuid, c.order_id, c.event_type, c.occurred_at,
    (c.occurred_at AT TIME ZONE 'UTC')::date AS day,
    o.customer_id, o.currency::text AS currency, o.total_cents,
    c.event_type = 'OrderCancelled'
        AND bool_or(c.event_type = 'OrderPaid') OVER (PARTITION BY c.order_id) AS of_paid
FROM counted c JOIN orders.orders o ON o.id::text = c.order_id
