INSERT INTO reconcile.differences (day, currency, event_type, measure, orders_value,
    topic_value, analytics_value, order_ids, orders_involved)
VALUES (%(day)s, %(currency)s, %(event_type)s, %(measure)s, %(orders)s, %(topic)s,
    %(analytics)s, %(order_ids)s, %(orders_involved)s)
