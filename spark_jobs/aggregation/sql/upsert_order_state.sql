INSERT INTO analytics.order_state AS o
SELECT DISTINCT ON (order_id) order_id, status, status_rank, occurred_at
FROM t_new ORDER BY order_id, occurred_at DESC, status_rank DESC
ON CONFLICT (order_id) DO UPDATE SET
    status        = EXCLUDED.status,
    status_rank   = EXCLUDED.status_rank,
    last_event_at = EXCLUDED.last_event_at
WHERE (EXCLUDED.last_event_at, EXCLUDED.status_rank) > (o.last_event_at, o.status_rank)
