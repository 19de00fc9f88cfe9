-- Every order placed on the days checked: its OrderPlaced occurred at its created_at.
SELECT (created_at AT TIME ZONE 'UTC')::date AS day, currency::text, count(*) AS events,
    sum(total_cents) AS cents
FROM orders.orders
WHERE created_at >= %(first)s::date AND created_at < %(last)s::date + 1
GROUP BY 1, 2
