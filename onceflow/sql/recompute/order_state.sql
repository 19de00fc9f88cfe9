-- {order_state}'s paid and cancelled_at (migration 0015) from recompute_events
-- (events.sql) and each order's latest status: an order PAID or SHIPPED was paid; a CANCELLED
-- one was cancelled at its latest event.
UPDATE {order_state} s SET
    paid = s.status IN ('PAID', 'SHIPPED') OR EXISTS (
        SELECT 1 FROM recompute_events e
        WHERE e.order_id = s.order_id AND e.event_type = 'OrderPaid'),
    cancelled_at = CASE WHEN s.status = 'CANCELLED' THEN s.last_event_at END
