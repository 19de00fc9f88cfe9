-- The orders of one day and currency, as the order tables know them: placed that day
-- (latest = false), or whose latest change that day left them in `status` (latest = true).
SELECT id::text FROM orders.orders
WHERE currency = %(currency)s
  AND CASE WHEN %(latest)s
      THEN status = %(status)s AND updated_at >= %(day)s::date AND updated_at < %(day)s::date + 1
      ELSE created_at >= %(day)s::date AND created_at < %(day)s::date + 1 END
