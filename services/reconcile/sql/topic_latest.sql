-- How many orders' latest event on the topic is of each type, per day and currency.
SELECT day, currency, event_type, count(*) AS orders
FROM ({latest}) latest
WHERE day <= %(last)s
GROUP BY day, currency, event_type
