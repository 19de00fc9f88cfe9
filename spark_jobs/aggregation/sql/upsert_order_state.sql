-- An order's status moves only to a later event (status_rank orders events of one instant);
-- whether it was paid, and when it was cancelled, are kept once counted (sql/refunds.sql).
INSERT INTO aggregation.order_state AS o (order_id, status, status_rank, last_event_at, paid,
    cancelled_at)
SELECT DISTINCT ON (order_id) order_id, status, status_rank, occurred_at,
    bool_or(event_type = 'OrderPaid') OVER w,
    min(occurred_at) FILTER (WHERE event_type = 'OrderCancelled') OVER w
FROM t_new
WINDOW w AS (PARTITION BY order_id)
ORDER BY order_id, occurred_at DESC, status_rank DESC
ON CONFLICT (order_id) DO UPDATE SET
    status = CASE WHEN (EXCLUDED.last_event_at, EXCLUDED.status_rank)
                       > (o.last_event_at, o.status_rank) THEN EXCLUDED.status ELSE o.status END,
    status_rank = CASE WHEN (EXCLUDED.last_event_at, EXCLUDED.status_rank)
                            > (o.last_event_at, o.status_rank)
                       THEN EXCLUDED.status_rank ELSE o.status_rank END,
    last_event_at = GREATEST(o.last_event_at, EXCLUDED.last_event_at),
    paid          = o.paid OR EXCLUDED.paid,
    cancelled_at  = LEAST(o.cancelled_at, EXCLUDED.cancelled_at)
