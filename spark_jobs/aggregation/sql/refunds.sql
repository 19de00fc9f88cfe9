-- Refunds (contract 5: cancellations of orders that had been paid). An order's refund is
-- counted once, by the batch after which both its OrderCancelled and an OrderPaid are counted:
-- in this batch, or by an earlier one (aggregation.order_state.paid / cancelled_at). So it does
-- not depend on the order the events arrive in, within a batch or across batches. It falls on
-- the UTC day of the cancellation, in the order's currency, for its customer.
INSERT INTO t_refunds (order_id, day, currency, customer_id, refunded_cents)
SELECT n.order_id,
    coalesce(min(n.day) FILTER (WHERE n.event_type = 'OrderCancelled'),
             (min(o.cancelled_at) AT TIME ZONE 'UTC')::date),
    min(n.currency), min(n.customer_id), min(n.total_cents)
FROM t_new n LEFT JOIN aggregation.order_state o USING (order_id)
WHERE n.event_type IN ('OrderPaid', 'OrderCancelled')
GROUP BY n.order_id
HAVING (bool_or(o.paid) OR bool_or(n.event_type = 'OrderPaid'))
   AND (min(o.cancelled_at) IS NOT NULL OR bool_or(n.event_type = 'OrderCancelled'))
   AND NOT (coalesce(bool_or(o.paid), false) AND min(o.cancelled_at) IS NOT NULL)
