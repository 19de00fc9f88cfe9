-- Each order's latest change, by status: its latest event occurred at its updated_at.
SELECT (updated_at AT TIME ZONE 'UTC')::date AS day, currency::text, status, count(*) AS orders
FROM orders.orders
WHERE updated_at >= %(first)s::date AND updated_at < %(last)s::date + 1
GROUP BY 1, 2, 3
