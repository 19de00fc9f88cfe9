SELECT count(*) FROM orders.idempotency_keys WHERE created_at < now() - %(keep)s::interval
