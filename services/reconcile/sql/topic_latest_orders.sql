-- The orders whose latest event on the topic is of one type on one day, in one currency.
SELECT order_id
FROM ({latest}) latest
WHERE day = %(day)s AND currency = %(currency)s AND event_type = %(event_type)s
