-- The orders of one (day, currency, event type) on the topic; refunded: only those paid.
SELECT DISTINCT e.order_id FROM reconcile.topic_events e
WHERE e.day = %(day)s AND e.currency = %(currency)s AND e.event_type = %(event_type)s
  AND (NOT %(refunded)s OR EXISTS (
        SELECT 1 FROM reconcile.topic_events p
        WHERE p.order_id = e.order_id AND p.event_type = %(paid)s))
