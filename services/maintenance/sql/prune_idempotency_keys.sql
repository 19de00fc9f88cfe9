-- One batch of expired Idempotency-Key records, found through idempotency_keys_by_age.
DELETE FROM orders.idempotency_keys
WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM orders.idempotency_keys
    WHERE created_at < now() - %(keep)s::interval
    LIMIT %(batch)s))
